import type { SwapRunResult } from './swap-instance.types.js';

export type SwapRunCounters = ReturnType<typeof swapRunCounters>;

/** What a swap run counts as it goes. */
export function swapRunCounters() {
  return {
    ttftMs: [] as number[],
    tbtMs: [] as number[],
    swapOuts: 0,
    swapOutBlocks: 0,
    swapOutCalls: 0,
    reusedBlocks: 0,
    swapIns: 0,
    swapInBlocks: 0,
    asyncSwapIns: 0,
    recomputes: 0,
    prefixRestores: 0,
    prefixRestoredTokens: 0,
    switchStallMs: 0,
    computeMs: 0,
    groupedBlocks: 0,
    groupedCalls: 0,
    swapOutMs: 0,
    traditionalSwapOutBlocks: 0,
    traditionalSwapOutCalls: 0,
    traditionalSwapOutMs: 0,
  };
}

/** The run's result from its counters (keys in the order the reports print them). */
export function swapRunResult(
  o: SwapRunCounters,
  run: { readonly requests: number; readonly iterations: number; readonly endMs: number },
): SwapRunResult {
  return {
    requests: run.requests,
    ttftMs: o.ttftMs,
    tbtMs: o.tbtMs,
    iterations: run.iterations,
    endMs: run.endMs,
    swapOuts: o.swapOuts,
    swapOutBlocks: o.swapOutBlocks,
    swapOutCalls: o.swapOutCalls,
    reusedBlocks: o.reusedBlocks,
    swapIns: o.swapIns,
    swapInBlocks: o.swapInBlocks,
    asyncSwapIns: o.asyncSwapIns,
    recomputes: o.recomputes,
    prefixRestores: o.prefixRestores,
    prefixRestoredTokens: o.prefixRestoredTokens,
    switchStallMs: o.switchStallMs,
    computeMs: o.computeMs,
    blocksPerCall: o.groupedCalls > 0 ? o.groupedBlocks / o.groupedCalls : 0,
    swapOutMs: o.swapOutMs,
    traditionalSwapOut: { blocks: o.traditionalSwapOutBlocks, calls: o.traditionalSwapOutCalls, ms: o.traditionalSwapOutMs },
  };
}
