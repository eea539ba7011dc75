import type { MaxContextPoint } from './swiftcache-context.mjs';
import type { TtftRate } from './swiftcache-ttft.mjs';
export interface SwiftcacheKeys {
  max_context_vs_chunked8k: number;
  ttft_p99_vs_offload: number;
  worker_interference: number;
  ttft_p99_vs_offload_lend_idle: number;
  ttft_p99_vs_offload_live_only: number;
  max_context_vs_chunked8k_by_gb: Record<string, number>;
  max_context_eq5_vs_chunked8k_by_gb: Record<string, number>;
  ttft_p99_vs_offload_by_rate: Record<string, number>;
  worker_nvlink_share: number;
  worker_hbm_share_by_length: Record<string, number>;
}
export interface InterferenceAtLength {
  tokens: number;
  service_ms: number;
  hbm_share: number;
  nvlink_share: number;
  per_worker: { hbm: number; nvlink: number }[];
}
export function interferenceAtLength(tokens: number, lentShare: number[], s?: unknown): InterferenceAtLength;
export function swiftcacheExperiment(
  s?: unknown,
  progress?: (label: string) => void,
): {
  setup: Record<string, unknown>;
  paper: Record<string, unknown>;
  max_context: MaxContextPoint[];
  max_context_qwen3_8b_master: MaxContextPoint[];
  ttft: { sessions_in_rotation: number; rates: TtftRate[] };
  interference: { lengths: InterferenceAtLength[]; ttft_runs: Array<Record<string, number>>; lent_share_at_96gb: number[] };
  swiftcache: SwiftcacheKeys;
};
