export interface SwiftcacheSetup {
  gpu: string;
  master: string;
  workers: string[];
  memoryPoints: { gb: number; workers: string[] }[];
  utilization: number;
  chunkTokens: number;
  blockTokens: number;
  window: number;
  elasticWindowMs: number;
  historyTokens: [number, number];
  turnInput: { median: number; sigma: number; min: number; max: number };
  reply: { median: number; sigma: number; min: number; max: number };
  hostOffloadBytes: number;
  ratesPerS: number[];
  requests: number;
  seed: number;
  workerLiveTokens: number;
  interferenceLengths: number[];
  scale: { flops: number; hbm: number; mem: number; nvlink: number; pcie: number };
}
export const SWIFTCACHE_SETUP: SwiftcacheSetup;
export const SWIFTCACHE_PAPER: {
  max_context_vs_chunked8k_range: [number, number];
  max_context_vs_other_baselines_range: [number, number];
  ttft_p99_reduction_vs_lmcache: Record<string, number>;
  ttft_p99_vs_lmcache: Record<string, number>;
  worker_ttft_increase_max: number;
  worker_tpot_increase_max: number;
};
export function kvShape(
  m: { layers: number; kvHeads: number; headDim: number },
  blockTokens?: number,
): { layers: number; blockTokens: number; kvHeads: number; headDim: number };
export function swiftcacheHardware(s?: SwiftcacheSetup): Record<string, unknown>;
