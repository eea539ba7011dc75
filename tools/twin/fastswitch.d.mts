export const FASTSWITCH_SETUP: Record<string, unknown> & {
  seed: number;
  curveSeeds: number;
  conversations: number;
  runConversations: number;
  contextTokens: number;
  requestsPerS: number;
  dispatchMs: number[];
  frequencies: number[];
  patterns: string[];
};
export const SYSTEMS: Record<string, { groups: boolean; asyncSwapIn: boolean; reuse: boolean }>;
export const PAPER: Record<string, number | number[]>;
export const TARGETS: Record<string, import('../../bench/lib/results.targets.mjs').HeadlineTarget>;
export function inBands(x: Record<string, unknown>): boolean;
export interface FastswitchRun {
  requests: number;
  p99_ttft_ms: number;
  p999_tbt_ms: number;
  p50_ttft_ms: number;
  swap_out_blocks: number;
  swap_outs: number;
  swap_out_calls: number;
  reused_blocks: number;
  swap_in_blocks: number;
  async_swap_ins: number;
  recomputes: number;
  switch_stall_s: number;
  switch_share: number;
  blocks_per_call: number;
  [k: string]: number;
}
export interface FastswitchRatios {
  p99_ttft_ratio: number;
  p999_tbt_ratio: number;
  swap_out_reduction: number;
  switch_overhead_ratio: number;
}
export interface SwapTurnIn {
  userTokens: number;
  replyTokens: number;
  thinkMs: number;
}
export function fastswitchConversations(s?: object): Array<{ arrivalMs: number; turns: SwapTurnIn[] }>;
export function runOnce(o: {
  system: string;
  dispatchMs: number;
  pattern: string;
  frequency: number;
  s?: object;
  convs: Array<{ arrivalMs: number; turns: SwapTurnIn[] }>;
  scale?: Record<string, number>;
}): FastswitchRun;
export function paperDispatchMs(): number;
export function fastswitchCausesOf(json: object): Record<string, string>;
export function ratios(v: FastswitchRun, f: FastswitchRun): FastswitchRatios;
export function round(x: number, d?: number): number;
export function fastswitchExperiment(o?: { s?: object; progress?: (i: number, n: number, label: string) => void }): {
  setup: Record<string, unknown> & { derived_dispatch_us: number };
  fastswitch: FastswitchRatios &
    Record<string, unknown> & { dispatch_us: number; measured_dispatch: FastswitchRatios & Record<string, number> };
  baseline_check: Record<string, import('@mnemo/twin').BaselineCheck>;
  curve: Array<
    FastswitchRatios & {
      dispatch_us: number;
      vllm: FastswitchRun;
      fastswitch: FastswitchRun;
      by_seed: Array<FastswitchRatios & { seed: number }>;
    }
  >;
  by_trace: Array<FastswitchRatios & { pattern: string; frequency: number }>;
  ablation: Record<string, FastswitchRun & FastswitchRatios>;
  load: FastswitchRatios & { requests_per_s: number };
  prefix_kept: Record<
    'paper_dispatch' | 'measured_dispatch',
    FastswitchRatios & { dispatch_us: number; vllm: FastswitchRun; fastswitch: FastswitchRun }
  >;
  paper: Record<string, number | number[]>;
};
