// One run of FastSwitch's experiment: a system at a per-call dispatch under one priority trace,
// and the headline ratios of two runs.
import { percentile } from '@mnemo/kv-core';
import { PriorityTrace, type PriorityPattern } from '../../swap/priority.trace.js';
import { SwapInstanceSim } from '../../swap/swap-instance.sim.js';
import type { SwapConversation } from '../../swap/swap-instance.types.js';
import {
  FASTSWITCH_SETUP,
  FASTSWITCH_SYSTEMS,
  fastswitchHardware,
  round,
  type FastswitchSetup,
  type FastswitchSystem,
  type HardwareScale,
} from './fastswitch.setup.js';

/** What one run reports (times rounded; a run always has requests, so every percentile is a number). */
export interface FastswitchRun {
  readonly requests: number;
  readonly p99_ttft_ms: number;
  readonly p999_tbt_ms: number;
  readonly p50_ttft_ms: number;
  readonly swap_out_blocks: number;
  readonly swap_outs: number;
  readonly swap_out_calls: number;
  readonly reused_blocks: number;
  readonly swap_in_blocks: number;
  readonly async_swap_ins: number;
  readonly recomputes: number;
  readonly prefix_restores: number;
  readonly prefix_restored_tokens: number;
  readonly switch_stall_s: number;
  readonly switch_share: number;
  readonly compute_s: number;
  readonly iterations: number;
  readonly simulated_s: number;
  readonly blocks_per_call: number;
  /** Time the run's swap-outs copied, s. */
  readonly swap_out_s: number;
  /** The same swap-outs priced as traditional ones, every block copied (Table 1's left column; the run's own without reuse). */
  readonly traditional_swap_out: { readonly blocks: number; readonly calls: number; readonly s: number };
}

/** FastSwitch over vLLM: the four headline ratios, and the swap-out cut across the two runs. */
export interface FastswitchRatios {
  readonly p99_ttft_ratio: number;
  readonly p999_tbt_ratio: number;
  /**
   * What host-copy reuse cut from FastSwitch's own swap-outs, 1 − blocks copied ÷ blocks the same swap-outs copy without
   * it: Table 1's measurement (53%). 0 for a system without reuse.
   */
  readonly swap_out_reduction: number;
  readonly switch_overhead_ratio: number;
  /** 1 − FastSwitch's swap-out blocks ÷ vLLM's over their two runs: reuse with what priority churn and grouping change besides. */
  readonly swap_out_blocks_vs_vllm: number;
}

/** Two runs side by side and the ratios between them. */
export interface FastswitchPair extends FastswitchRatios {
  readonly vllm: FastswitchRun;
  readonly fastswitch: FastswitchRun;
}

export interface FastswitchRunOptions {
  readonly system: FastswitchSystem;
  readonly dispatchMs: number;
  readonly pattern: PriorityPattern;
  readonly frequency: number;
  readonly s?: FastswitchSetup;
  readonly convs: readonly SwapConversation[];
  readonly scale?: HardwareScale;
}

const pct = (xs: readonly number[], p: number): number => percentile(xs, p) ?? NaN;

/** One run: a system at a dispatch cost under one trace. */
export function fastswitchRunOnce({
  system,
  dispatchMs,
  pattern,
  frequency,
  s = FASTSWITCH_SETUP,
  convs,
  scale = {},
}: FastswitchRunOptions): FastswitchRun {
  const hw = fastswitchHardware(s, scale);
  const link = { dispatchMs: dispatchMs * (scale.dispatch ?? 1), bytesPerMs: hw.pcie.bytesPerMs * (scale.pcie ?? 1) };
  const trace = new PriorityTrace({ pattern, levels: s.levels, moveChance: s.moveChance, seed: s.seed });
  const sim = new SwapInstanceSim(
    {
      compute: hw.compute,
      model: hw.model,
      link,
      deviceBlocks: hw.deviceBlocks,
      hostBytes: s.hostBytes,
      maxBatch: s.maxBatch,
      maxPrefillTokens: s.maxPrefillTokens,
      groupBlocks: s.groupBlocks,
      segmentBlocks: s.segmentBlocks,
      mechanisms: FASTSWITCH_SYSTEMS[system],
      trace,
      updateEvery: Math.round(1 / frequency),
      prefixKept: s.prefixKept,
    },
    convs,
  );
  const r = sim.run();
  return {
    requests: r.requests,
    p99_ttft_ms: round(pct(r.ttftMs, 99)),
    p999_tbt_ms: round(pct(r.tbtMs, 99.9)),
    p50_ttft_ms: round(pct(r.ttftMs, 50)),
    swap_out_blocks: r.swapOutBlocks,
    swap_outs: r.swapOuts,
    swap_out_calls: r.swapOutCalls,
    reused_blocks: r.reusedBlocks,
    swap_in_blocks: r.swapInBlocks,
    async_swap_ins: r.asyncSwapIns,
    recomputes: r.recomputes,
    prefix_restores: r.prefixRestores,
    prefix_restored_tokens: r.prefixRestoredTokens,
    switch_stall_s: round(r.switchStallMs / 1000),
    switch_share: round(r.switchStallMs / r.endMs, 4),
    compute_s: round(r.computeMs / 1000),
    iterations: r.iterations,
    simulated_s: round(r.endMs / 1000, 1),
    blocks_per_call: round(r.blocksPerCall, 2),
    swap_out_s: round(r.swapOutMs / 1000, 4),
    traditional_swap_out: {
      blocks: r.traditionalSwapOut.blocks,
      calls: r.traditionalSwapOut.calls,
      s: round(r.traditionalSwapOut.ms / 1000, 4),
    },
  };
}

/** Table 1's three ratios inside one run: its swap-outs as made (host copies reused) over the same ones copying every block. */
export interface Table1Ratios {
  readonly blocks: number;
  readonly operations: number;
  readonly latency: number;
}

/** {@link Table1Ratios} of run `f`; each 1 where nothing was swapped out (the two columns are then the same). */
export function table1Ratios(f: FastswitchRun): Table1Ratios {
  const t = f.traditional_swap_out;
  const of = (x: number, all: number): number => (all > 0 ? round(x / all, 4) : 1);
  return { blocks: of(f.swap_out_blocks, t.blocks), operations: of(f.swap_out_calls, t.calls), latency: of(f.swap_out_s, t.s) };
}

/** FastSwitch (`f`) over vLLM (`v`): the four headline ratios. */
export function fastswitchRatios(v: FastswitchRun, f: FastswitchRun): FastswitchRatios {
  return {
    p99_ttft_ratio: round(v.p99_ttft_ms / f.p99_ttft_ms),
    p999_tbt_ratio: round(v.p999_tbt_ms / f.p999_tbt_ms),
    swap_out_reduction: f.traditional_swap_out.blocks > 0 ? round(1 - f.swap_out_blocks / f.traditional_swap_out.blocks) : 0,
    switch_overhead_ratio: round(v.switch_stall_s / f.switch_stall_s),
    swap_out_blocks_vs_vllm: round(1 - f.swap_out_blocks / v.swap_out_blocks),
  };
}
