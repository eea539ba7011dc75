/** Tuning of {@link SwapInPolicy}. */
export interface SwapInPolicyOptions {
  /** Recent swaps and iterations the averages cover. */
  readonly window: number;
  /** A swap-in predicted to take at most this share of an iteration is waited for (sync). */
  readonly syncShare: number;
  /** An asynchronous swap-in still pending after this many iterations is waited for (no starving copies). */
  readonly maxAsyncIterations: number;
  /**
   * Whether a copy runs beside compute without taking its resources (a GPU's copy engines);
   * default true. False where copies and compute share the same cores (the CPU backend, whose
   * kernels take every core while they run): overlapping hides nothing there, so every swap-in
   * is synchronous.
   */
  readonly overlap?: boolean;
}

export const DEFAULT_SWAP_IN: SwapInPolicyOptions = { window: 32, syncShare: 0.5, maxAsyncIterations: 8 };

/** NODE_SWAP_IN: `adaptive` (the policy decides), `sync` (always wait), `async` (never wait while others run; experiments). */
export const SWAP_IN_MODES = ['adaptive', 'sync', 'async'] as const;
export type SwapInMode = (typeof SWAP_IN_MODES)[number];

/**
 * Synchronous or asynchronous swap-in from recent statistics (FastSwitch Algorithm 1, adapted):
 * an asynchronous swap-in overlaps its copy with other sequences' compute but leaves the
 * sequence out of this iteration; a synchronous one stalls the iteration for the copy. So:
 * async only when there is compute to overlap (others decode this iteration) and the copy,
 * predicted from the recent per-block swap time, would take more than `syncShare` of a recent
 * iteration; sync otherwise (and before any statistics exist), and always where copies cannot
 * overlap compute (`overlap: false`): there an asynchronous copy competes with the iteration for
 * the same cores and the sequence still sits the iteration out. Pure bookkeeping: the caller
 * measures and reports.
 */
export class SwapInPolicy {
  private readonly msPerBlock: number[] = [];
  private readonly iterationMs: number[] = [];

  constructor(private readonly opts: SwapInPolicyOptions = DEFAULT_SWAP_IN) {
    if (!Number.isInteger(opts.window) || opts.window < 1) throw new RangeError(`window must be a positive integer, got ${opts.window}`);
    if (!(opts.syncShare >= 0)) throw new RangeError(`syncShare must be ≥ 0, got ${opts.syncShare}`);
    if (!Number.isInteger(opts.maxAsyncIterations) || opts.maxAsyncIterations < 0)
      throw new RangeError(`maxAsyncIterations must be a non-negative integer, got ${opts.maxAsyncIterations}`);
  }

  recordSwap(blocks: number, ms: number): void {
    if (blocks > 0 && ms >= 0) push(this.msPerBlock, ms / blocks, this.opts.window);
  }

  recordIteration(ms: number): void {
    if (ms >= 0) push(this.iterationMs, ms, this.opts.window);
  }

  choose(blocks: number, othersDecode: boolean): 'sync' | 'async' {
    if (this.opts.overlap === false || !othersDecode || this.msPerBlock.length === 0 || this.iterationMs.length === 0) return 'sync';
    return blocks * mean(this.msPerBlock) > this.opts.syncShare * mean(this.iterationMs) ? 'async' : 'sync';
  }

  /**
   * How a swap-in of `blocks` goes under the configured mode: `adaptive` asks {@link choose};
   * `async` overlaps whenever others decode (there is nothing to overlap otherwise); `sync` waits.
   */
  decide(mode: SwapInMode, blocks: number, othersDecode: boolean): 'sync' | 'async' {
    if (mode === 'adaptive') return this.choose(blocks, othersDecode);
    return mode === 'async' && othersDecode ? 'async' : 'sync';
  }

  /** Whether an asynchronous swap-in pending for `iterations` iterations must now be waited for. */
  mustSettle(iterations: number): boolean {
    return iterations > this.opts.maxAsyncIterations;
  }
}

function push(a: number[], v: number, window: number): void {
  a.push(v);
  if (a.length > window) a.shift();
}

const mean = (a: readonly number[]): number => a.reduce((s, v) => s + v, 0) / a.length;
