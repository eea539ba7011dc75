import type { SwapInPolicy } from './swap-in.policy.js';

/** One asynchronous swap-in under way: what the caller tracks it by, and the iteration it started in. */
interface Pending<T> {
  readonly item: T;
  readonly iteration: number;
  settled: boolean;
}

/**
 * The node's asynchronous swap-ins in start order, counted in iterations (FastSwitch §3.2): each
 * iteration starts with {@link startIteration}, which names the swap-ins pending longer than the
 * policy allows — the caller waits for those, so copy workers are not starved by inference —
 * and forgets the settled ones. Pure bookkeeping: the caller owns the copies and says when one
 * {@link settle}s.
 */
export class PendingSwapIns<T> {
  private readonly pending: Array<Pending<T>> = [];
  private iteration = 0;

  constructor(private readonly policy: Pick<SwapInPolicy, 'mustSettle'>) {}

  get size(): number {
    return this.pending.length;
  }

  /** A swap-in went asynchronous in the current iteration. */
  add(item: T): void {
    this.pending.push({ item, iteration: this.iteration, settled: false });
  }

  /** Its copy ended (either way). */
  settle(item: T): void {
    for (const p of this.pending) if (p.item === item) p.settled = true;
  }

  /** A new iteration: the unsettled swap-ins it must wait for, oldest first. Call {@link dropSettled} after waiting. */
  startIteration(): T[] {
    this.iteration++;
    const out: T[] = [];
    for (const p of this.pending) if (!p.settled && this.policy.mustSettle(this.iteration - p.iteration)) out.push(p.item);
    this.dropSettled();
    return out;
  }

  /** Forgets the settled swap-ins (their sequences are back). */
  dropSettled(): void {
    for (let i = this.pending.length - 1; i >= 0; i--) if (this.pending[i]!.settled) this.pending.splice(i, 1);
  }

  /** The oldest swap-in still pending (what an iteration with nothing else to do waits for). */
  oldest(): T | undefined {
    return this.pending[0]?.item;
  }
}
