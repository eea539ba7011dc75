/** How a request's API priority is tempered for fairness. */
export interface FairnessOptions {
  /** Ranks are recomputed every this many iterations (FastSwitch's priority-update period); between, they hold still. */
  readonly updateEvery: number;
  /** A sequence left out of the batch gains one priority level per this many iterations (aging); Infinity: never. */
  readonly agingIterations: number;
  /** A sequence loses one level per this many tokens it was served (token-count fairness); Infinity: never. */
  readonly tokensPerLevel: number;
}

export const DEFAULT_FAIRNESS: FairnessOptions = { updateEvery: 4, agingIterations: 32, tokensPerLevel: Infinity };

interface Account {
  /** Consecutive iterations it was left out (reset when it runs). */
  waited: number;
  /** Tokens computed or decoded for it so far. */
  served: number;
  /** Rank fixed at the last update. */
  rank: number;
}

/**
 * Effective priority of each sequence as a policy object: the API priority, plus one level per
 * `agingIterations` spent left out, minus one per `tokensPerLevel` tokens served — refreshed
 * every `updateEvery` iterations so the running set does not churn between updates.
 *
 * Starvation is bounded: a sequence left out does not lose levels while it waits, and gains one
 * per `agingIterations`, while a running one gains none. So after at most
 * `(maxPriority − priority + 1) · agingIterations + updateEvery` iterations it ranks above every
 * running sequence whose API priority is at most maxPriority, and the planner prefers it to them.
 */
export class FairPriorityRanker {
  private readonly accounts = new Map<string, Account>();
  private iteration = 0;

  constructor(private readonly opts: FairnessOptions = DEFAULT_FAIRNESS) {
    if (!Number.isInteger(opts.updateEvery) || opts.updateEvery < 1)
      throw new RangeError(`updateEvery must be a positive integer, got ${opts.updateEvery}`);
    for (const k of ['agingIterations', 'tokensPerLevel'] as const) {
      if (!(opts[k] > 0)) throw new RangeError(`${k} must be positive (Infinity turns it off), got ${opts[k]}`);
    }
  }

  /** Effective priority of `id` (API priority `base`) as of the last update; a new sequence starts at `base`. */
  rank(id: string, base: number): number {
    let a = this.accounts.get(id);
    if (!a) this.accounts.set(id, (a = { waited: 0, served: 0, rank: base }));
    return a.rank;
  }

  /**
   * Records one iteration: `served` tokens for each sequence that ran, a wait for each of
   * `left` that did not; every `updateEvery` calls the ranks are recomputed from `bases`.
   */
  tick(served: ReadonlyMap<string, number>, left: readonly string[], bases: ReadonlyMap<string, number>): void {
    for (const [id, n] of served) {
      const a = this.account(id, bases);
      a.served += n;
      a.waited = 0;
    }
    for (const id of left) this.account(id, bases).waited++;
    if (++this.iteration % this.opts.updateEvery !== 0) return;
    for (const [id, a] of this.accounts) {
      const base = bases.get(id);
      if (base === undefined) continue;
      a.rank = base + Math.floor(a.waited / this.opts.agingIterations) - Math.floor(a.served / this.opts.tokensPerLevel);
    }
  }

  /** Drops a finished sequence's account. */
  forget(id: string): void {
    this.accounts.delete(id);
  }

  get size(): number {
    return this.accounts.size;
  }

  private account(id: string, bases: ReadonlyMap<string, number>): Account {
    let a = this.accounts.get(id);
    if (!a) this.accounts.set(id, (a = { waited: 0, served: 0, rank: bases.get(id) ?? 0 }));
    return a;
  }
}
