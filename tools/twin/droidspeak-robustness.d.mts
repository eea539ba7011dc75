import type { DroidspeakSetup } from './droidspeak.mjs';
export interface DroidspeakRobustnessRow {
  figure: string;
  scale: number;
  throughput_vs_full_prefill_at_slo: number;
  quality_loss_at_slo: number;
  cheapest_within_floor_throughput_vs_full_prefill_at_slo: number;
  fetch_share_of_prefill_half_plan_max: number;
  constructed_throughput_vs_full_prefill_at_slo: number | null;
  floor_10pct_cheapest: number | null;
}
export function droidspeakRobustness(o?: { s?: DroidspeakSetup; results?: unknown; progress?: (label: string) => void }): {
  rows: DroidspeakRobustnessRow[];
  throughput_vs_full_prefill_at_slo_range: [number, number];
  cheapest_within_floor_range: [number, number];
  fetch_share_of_prefill_half_plan_max_range: [number, number];
  constructed_throughput_range: [number, number];
  target_met_in_every_case: boolean;
  fetch_share_within_paper_in_every_case: boolean;
};
