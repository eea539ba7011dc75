import type { PoolingSetup } from './pooling.mjs';
export interface RobustnessRow {
  figure: string;
  scale?: number;
  share?: number;
  ttft_128k_vs_file_store: number;
  blocked_io_128k_vs_file_store: number;
  striped_vs_single_device: number;
}
export function poolingRobustness(s?: PoolingSetup): {
  rows: RobustnessRow[];
  targets_met_in_every_case: boolean;
  ttft_128k_vs_file_store_range: [number, number];
  blocked_io_128k_vs_file_store_range: [number, number];
  striped_vs_single_device_range: [number, number];
  filesystem_share: {
    rows: RobustnessRow[];
    ttft_128k_vs_file_store_range: [number, number];
    blocked_io_128k_vs_file_store_range: [number, number];
  };
};
