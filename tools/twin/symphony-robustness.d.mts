import type { GpuHardware } from './gpu-cluster.mjs';
import type { SymphonyRun } from './symphony.mjs';
export interface RobustnessRow {
  parameter: string;
  factor: number;
  ttft_vs_vllm: number | null;
  tpot_vs_vllm: number | null;
  symphony: { ttft_mean_ms: number | null; tpot_mean_ms: number | null };
  vllm_paper: { ttft_mean_ms: number | null; tpot_mean_ms: number | null };
}
export const ROBUSTNESS: { users: number; factors: number[]; parameters: string[] };
export function symphonyRobustness(o?: {
  o?: SymphonyRun;
  r?: { users: number; factors: number[]; parameters: string[] };
  hw?: GpuHardware;
  progress?: (i: number, n: number, label: string) => void;
}): {
  users: number;
  rows: RobustnessRow[];
  ttft_vs_vllm_range: number[];
  tpot_vs_vllm_range: number[];
  symphony_ahead_in_every_case: boolean;
  in_paper_bands_in_every_case: boolean;
  baseline: string;
};
