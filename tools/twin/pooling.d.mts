export interface PoolingSetup {
  gpu: string;
  model: string;
  ddr4BytesPerMs: number;
  ddr4Modules: number;
  nvme: { dispatchMs: number; bytesPerMs: number };
  ssds: number;
  hostPoolBytes: number;
  filesystemShare: number;
  chunkTokens: number;
  documents: number;
  questionTokens: number;
  contexts: number[];
  flopsScale?: number;
  pcieScale?: number;
}
export interface RequestTimes {
  ttft_ms: number;
  blocked_io_ms: number;
  compute_ms: number;
  kv_bytes: number;
  ssd_bytes: number;
}
export interface PoolingKeys {
  ttft_128k_vs_file_store: number;
  blocked_io_128k_vs_file_store: number;
  ttft_128k_vs: Record<string, number>;
  blocked_io_128k_vs: Record<string, number>;
  striped_vs_single_device: number;
  ablation_128k_ttft_vs_full: Record<string, number>;
  ttft_128k_s: Record<string, number>;
  blocked_io_128k_s: Record<string, number>;
  ttft_128k_vs_file_store_with_paper_gpu_time: number;
  ssd_file_over_host_read: number;
  filesystem_factor: number;
}
export const POOLING_SETUP: PoolingSetup;
export const POOLING_PAPER: Record<string, unknown>;
export const CONFIGS: Record<string, { modules: number; ssds: number; filesystem: boolean; lp: boolean; async: boolean; striped: boolean }>;
export function requestTimes(cfgName: string, context: number, s?: PoolingSetup): RequestTimes;
export function ssdRetrievalMs(context: number, ssds: number, s?: PoolingSetup): number;
export function poolingExperiment(s?: PoolingSetup): {
  setup: PoolingSetup;
  paper: Record<string, unknown>;
  curves: Record<string, Record<number, RequestTimes>>;
  pooling: PoolingKeys;
  baseline_check: Record<string, import('@mnemo/twin').BaselineCheck>;
};
