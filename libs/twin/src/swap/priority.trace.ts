import { SeededRng } from '../core/seeded.rng.js';

/** FastSwitch §4's two context-switching patterns (after LLMS, Yin et al. 2024). */
export type PriorityPattern = 'markov' | 'random';
export const PRIORITY_PATTERNS: readonly PriorityPattern[] = ['markov', 'random'];

export interface PriorityTraceOptions {
  readonly pattern: PriorityPattern;
  /** Priority levels, 0 … levels − 1 (higher runs first). */
  readonly levels: number;
  /** Markov only: the chance a conversation's level moves at an update (to a neighbouring level). */
  readonly moveChance: number;
  readonly seed: number;
}

/**
 * A precomputed ("offline", §4) priority trace: the level of each conversation at each priority
 * update, a pure function of (conversation, update index) and the seed, so every system under
 * comparison sees the same trace whatever its timing.
 * - random: every update draws each conversation's level afresh — no temporal correlation;
 * - markov: a conversation's level keeps its value or steps to a neighbour (`moveChance`), so
 *   what ran recently tends to keep running — temporal locality.
 */
export class PriorityTrace {
  /** Markov chains drawn so far, per conversation: level at update 0, 1, … */
  private readonly chains = new Map<number, number[]>();

  constructor(readonly opts: PriorityTraceOptions) {
    if (!Number.isInteger(opts.levels) || opts.levels < 2) throw new RangeError(`levels must be an integer ≥ 2, got ${opts.levels}`);
    if (!(opts.moveChance >= 0 && opts.moveChance <= 1)) throw new RangeError(`moveChance must be in [0, 1], got ${opts.moveChance}`);
  }

  level(conversation: number, update: number): number {
    if (!Number.isInteger(update) || update < 0) throw new RangeError(`update must be a non-negative integer, got ${update}`);
    if (this.opts.pattern === 'random') return Math.floor(this.draw(conversation, update) * this.opts.levels);
    let chain = this.chains.get(conversation);
    if (!chain) this.chains.set(conversation, (chain = [Math.floor(this.draw(conversation, 0) * this.opts.levels)]));
    while (chain.length <= update) {
      const u = chain.length;
      const prev = chain[u - 1]!;
      const r = this.draw(conversation, u);
      let next = prev;
      if (r < this.opts.moveChance) {
        // The lower half of the move's draw steps down, the upper half up; the edges reflect.
        const up = r >= this.opts.moveChance / 2;
        next = up ? (prev === this.opts.levels - 1 ? prev - 1 : prev + 1) : prev === 0 ? 1 : prev - 1;
      }
      chain.push(next);
    }
    return chain[update]!;
  }

  /** Forgets a finished conversation's chain. */
  forget(conversation: number): void {
    this.chains.delete(conversation);
  }

  private draw(conversation: number, update: number): number {
    return new SeededRng((this.opts.seed ^ Math.imul(conversation + 1, 0x9e3779b1) ^ Math.imul(update + 1, 0x85ebca6b)) >>> 0).next();
  }
}
