export interface DroidspeakSetup {
  gpu: string;
  link: string;
  model: string;
  contextMedian: number;
  contextP95: number;
  question: number;
  outputTokens: number;
  requests: number;
  seed: number;
  rates: number[];
  sloOverUnloaded: number;
  sloSensitivity: number[];
  headlineFloor: number;
  floors: number[];
  constructed: string;
  contexts: number[];
  flopsScale: number;
  memScale: number;
  linkScale: number;
}
export interface FloorRow {
  throughput_vs_full_prefill_at_slo: number;
  quality_loss: number;
  test_loss: number | null;
  recomputed_layers: number | null;
}
export interface CurvePoint {
  rate: number;
  achieved_rps: number;
  ttft_p50_s: number;
  ttft_p90_s: number;
  ttft_mean_s: number;
  e2e_mean_s: number;
  recomputed_layers_mean: number;
  quality_loss_mean: number;
  test_loss_mean: number | null;
  fetch_share_of_prefill: number;
}
export interface PairRun {
  slo_p90_ttft_s: number;
  unloaded_full_prefill_s: number;
  frontier: Array<{
    pattern: string;
    profiled: string;
    recomputed: number;
    quality_loss: number;
    test_loss: number | null;
    prefill_s: number;
  }>;
  configs: Record<
    string,
    { throughput_at_slo: number; at_slo: CurvePoint; throughput_at_slo_multiple: Record<string, number>; curve: CurvePoint[] }
  >;
}
export interface FetchShares {
  pattern: string;
  recomputed: number;
  max_fetch_share: number;
  rows: Array<{ tokens: number; fetch_share: number; prefill_s: number }>;
}
export interface DroidspeakKeys {
  throughput_vs_full_prefill_at_slo: number;
  quality_loss_at_slo: number;
  test_loss_at_slo: number | null;
  recomputed_layers_at_slo: number;
  full_reuse_throughput_vs_full_prefill_at_slo: number;
  full_reuse_quality_loss: number;
  cheapest_within_floor_throughput_vs_full_prefill_at_slo: number;
  by_floor: Record<string, FloorRow>;
  by_floor_cheapest: Record<string, FloorRow>;
  by_floor_budget_left: Record<string, FloorRow>;
  loosest_floor_tested: number;
  smallest_floor_reaching_2x: number | null;
  fetch_share_of_prefill_half_plan_max: number;
  half_plans: Record<string, string>;
  slo_sensitivity: Record<string, number>;
  /** Per pair kind of the paper's Table 1 (base_full_ft, full_ft_pair, base_lora, lora_pair). */
  by_kind: Record<
    string,
    {
      pairs: string[];
      throughput_vs_full_prefill_at_slo: number;
      best_throughput_vs_full_prefill_at_slo: number;
      test_loss_at_slo: number;
      task_floor_throughput_vs_full_prefill_at_slo: number | null;
      task_floor_best_throughput_vs_full_prefill_at_slo: number | null;
    }
  >;
  best_kind_throughput_vs_full_prefill_at_slo: number;
  by_pair: Record<
    string,
    {
      full_prefill_throughput_at_slo: number;
      full_reuse: FloorRow;
      at_task_floor: FloorRow | null;
      by_floor: Record<string, FloorRow>;
      by_floor_cheapest: Record<string, FloorRow>;
      by_floor_budget_left: Record<string, FloorRow>;
      slo_sensitivity: Record<string, number>;
    }
  >;
  constructed_throughput_vs_full_prefill_at_slo: number | null;
  constructed_quality_loss_at_slo: number | null;
  constructed_fetch_share_max: number | null;
}
export interface DroidspeakResult {
  droidspeak: DroidspeakKeys;
  paper: Record<string, { value: number | number[]; where: string }>;
  setup: DroidspeakSetup & { hardware: Record<string, number | string>; profiles: string };
  runs: Record<string, PairRun>;
  fetch_shares: Record<string, FetchShares[]>;
}
export const DROIDSPEAK_SETUP: DroidspeakSetup;
export const DROIDSPEAK_PAPER: Record<string, { value: number | number[]; where: string }>;
export function floorKey(f: number): string;
export function workloadShape(s?: DroidspeakSetup): { u: number[]; contexts: number[] };
export function droidspeakExperiment(o?: { s?: DroidspeakSetup; results?: unknown; progress?: (label: string) => void }): DroidspeakResult;
