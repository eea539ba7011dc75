export const NOT_MODELLED: string[];
export const UNCONTENDED_TPOT_RATIO: number;
export interface LivePass {
  ttft_p50_ms: number;
  ttft_p99_ms: number;
  requests?: number;
  tpot_p50_ms?: number;
  load_average?: { before: number; after: number };
}
export interface SystemValidation {
  live: {
    passes: LivePass[];
    ttft_p50_mean_ms: number;
    ttft_p99_mean_ms: number;
    ttft_p50_range_ms: [number, number];
    ttft_p99_range_ms: [number, number];
  };
  twin: {
    ttft_p50_ms: number;
    ttft_p99_ms: number;
    runs: Array<{ seed: number; requests: number; ttft_p50_ms: number | null; ttft_p99_ms: number | null; tpot_p50_ms: number | null }>;
  };
  per_pass: Array<{ load_average_before: number | null; tpot_over_twin: number | null; uncontended: boolean; ttft_p50_error: number }>;
  ttft_p50_error: number;
  ttft_p99_error: number;
  ttft_p99_in_live_range: boolean;
  mechanisms: Record<string, { live: unknown; twin: unknown }>;
  if_iterations_waited_as_live?: {
    wait_per_iteration_ms: number;
    ttft_p50_ms: number | null;
    ttft_p99_ms: number | null;
    tpot_p50_ms: number | null;
  };
}
export interface Validation {
  inputs: { live: { passes: number; users: number; nodes: number }; seeds: number[] };
  validation: {
    ttft_p50_error: Record<string, number>;
    ttft_p50_error_max: number;
    ttft_p99_error: Record<string, number>;
    ttft_p50_error_uncontended: Record<string, number | null>;
    uncontended_passes: Record<string, number>;
    ttft_p99_live_range_ms: Record<string, [number, number]>;
    ttft_p99_twin_ms: Record<string, number>;
    policy_order_matches: boolean;
    policy_order_p50_matches: boolean;
    policy_order_matches_where_live_separates: boolean;
    policy_order_p99_matches: boolean;
    order: { live_p50: string[]; twin_p50: string[]; live_p99: string[]; twin_p99: string[] };
    order_disagreements: Record<'p50' | 'p99', Array<{ live_faster: string; live_slower: string; live_ranges_overlap: boolean }>>;
    headline_systems: string[];
  };
  systems: Record<string, SystemValidation>;
  not_modelled: string[];
}
/** The multi-round benchmark's results file and the twin's calibration, as parsed JSON. */
export function validate(o: {
  mr: object;
  cal: object;
  seeds?: number[];
  log?: (line: string) => void;
  now?: () => number;
  liveFile?: string;
}): Validation;
