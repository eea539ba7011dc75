export const ROBUSTNESS: { conversations: number; factors: number[]; parameters: string[] };
export function fastswitchRobustness(o?: {
  s?: object;
  r?: { conversations: number; factors: number[]; parameters: string[] };
  progress?: (i: number, n: number, label: string) => void;
}): {
  conversations: number;
  rows: Array<{
    parameter: string;
    factor: number;
    p99_ttft_ratio: number;
    p999_tbt_ratio: number;
    swap_out_reduction: number;
    switch_overhead_ratio: number;
  }>;
  p99_ttft_ratio_range: number[];
  targets_met_in_every_case: boolean;
};
