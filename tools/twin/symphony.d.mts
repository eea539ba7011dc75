export interface RunSummary {
  requests: number;
  ttft_mean_ms: number | null;
  tpot_mean_ms: number | null;
  imbalance_max_over_median: number | null;
  routing: Record<string, number>;
  [k: string]: unknown;
}
export type Curves = Record<string, Record<number, RunSummary>>;
export interface SymphonyRun {
  users: number[];
  systems: string[];
  everyCount: string[];
  allSystemsUsers: number[];
  imbalanceUsers: number;
  compareUsers: number;
  variantUsers: number;
  thinkCompression: number;
  rampMs: number;
  warmMs: number;
  untilMs: number;
  seed: number;
  aaSeed?: number;
  aaBaselines?: string[];
  routingSeeds?: number[];
  sloOverLightest: number;
  paperBaseline?: string;
  conductorSweep?: { seed: number; users: number; thresholds: number[] };
}
export interface ConductorSweep {
  seed: number;
  users: number;
  rows: Array<{ threshold: number; ttft_mean_ms: number | null; ttft_p99_ms: number | null }>;
  best: number;
  best_pct: number;
}
export interface SymphonyKeys {
  ttft_vs_vllm: number | null;
  tpot_vs_vllm: number | null;
  users_vs_vllm_at_slo: number | null;
  users_vs_vllm_at_slo_is_lower_bound: boolean;
  tpot_slo_ms: number | null;
  users_within_slo: Record<string, number | null>;
  imbalance_256: Record<string, number | null>;
  by_users: Record<string, Record<string, number | null>>;
  noise?: Record<string, Record<number, number | null>>;
  never_behind_beyond_noise?: { value: boolean; failing: string[] };
  over_seeds?: { seeds: number[]; ratios: Record<string, Record<string, Record<number, number | null>>> };
  never_behind_over_seeds?: { value: boolean; failing: string[] };
  paired_over_seeds?: {
    seeds: number[];
    common_share: Record<string, Record<number, number | null>>;
    ratios: Record<string, Record<string, Record<number, number | null>>>;
  };
  never_behind_paired?: { value: boolean; failing: string[] };
  [k: string]: unknown;
}
export const SYMPHONY_RUN: SymphonyRun;
export const SYMPHONY_PAPER: Record<string, { value: number | number[]; where: string }>;
export function symphonyExperiment(o?: {
  o?: SymphonyRun;
  hw?: object;
  progress?: (i: number, n: number, label: string) => void;
  now?: () => number;
}): { curves: Curves; keys: SymphonyKeys; conductor_sweep: ConductorSweep | null; wall_s: number | null };
export function symphonyExperimentInWorkers(o?: {
  o?: SymphonyRun;
  hw?: object;
  progress?: (i: number, n: number, label: string) => void;
  workers?: number;
}): Promise<{ curves: Curves; keys: SymphonyKeys; conductor_sweep: ConductorSweep | null; wall_s: number | null }>;
export function symphonyKeys(curves: Record<string, Record<number, Partial<RunSummary>>>, o?: SymphonyRun): SymphonyKeys;
export function symphonyHardware(hw?: object): object;
export function symphonyCauses(json: { symphony: SymphonyKeys; curves: Curves; setup?: { run?: SymphonyRun } }): Record<string, string>;
export function symphonyBaselineChecks(curves: Curves, o?: SymphonyRun, hw?: object): Record<string, import('@mnemo/twin').BaselineCheck>;
