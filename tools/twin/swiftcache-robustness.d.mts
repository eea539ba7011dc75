export const SWIFTCACHE_TARGETS: Record<string, import('../../bench/lib/results.targets.mjs').HeadlineTarget>;
export interface SwiftcacheRobustnessRow {
  figure: string;
  scale: number;
  max_context_vs_chunked8k: number;
  ttft_p99_vs_offload: number;
  worker_interference: number;
  ttft_p99_vs_offload_lend_idle: number;
  ttft_p99_vs_offload_live_only: number;
}
export function swiftcacheRobustness(
  s?: unknown,
  progress?: (label: string) => void,
): { rows: SwiftcacheRobustnessRow[]; targets_met_in_every_case: boolean } & Record<string, unknown>;
