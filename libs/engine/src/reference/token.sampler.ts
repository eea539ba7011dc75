import type { SamplingParams } from '../engine.interface.js';
import { SeededPrng } from '../weights/seeded.prng.js';

/**
 * Per-sequence sampler: argmax when temperature is 0, else temperature softmax with
 * nucleus (top-p) truncation, drawing from a PRNG seeded by `params.seed`. The k-th
 * draw depends only on the seed and the logits, so a replayed sequence samples the
 * same tokens, and one continued after `params.drawOffset` draws (a failover) goes on
 * with the tokens the first run would have drawn next.
 */
export class TokenSampler {
  private readonly rng: SeededPrng;

  constructor(readonly params: SamplingParams) {
    if (!(params.temperature >= 0)) throw new RangeError(`temperature must be >= 0, got ${params.temperature}`);
    if (!(params.topP > 0 && params.topP <= 1)) throw new RangeError(`topP must be in (0, 1], got ${params.topP}`);
    const skip = params.drawOffset ?? 0;
    if (!(Number.isInteger(skip) && skip >= 0)) throw new RangeError(`drawOffset must be an integer >= 0, got ${skip}`);
    this.rng = new SeededPrng(params.seed >>> 0);
    // One draw per sampled token, greedy ones draw nothing (see sample): replaying the draws is
    // what makes a continued sequence sample the tokens its first run would have.
    if (params.temperature > 0) for (let i = 0; i < skip; i++) this.rng.nextFloat();
  }

  sample(logits: Float32Array): number {
    if (logits.length === 0) throw new RangeError('no logits to sample from');
    if (this.params.temperature === 0) return argmax(logits);
    const u = this.rng.nextFloat();
    const inv = 1 / this.params.temperature;
    let max = -Infinity;
    for (const x of logits) if (x > max) max = x;
    const probs = new Float64Array(logits.length);
    let sum = 0;
    for (let i = 0; i < logits.length; i++) sum += probs[i] = Math.exp((logits[i] - max) * inv);
    // Sort ids by probability (ties by id, so the order never depends on sort stability).
    const order = Array.from(probs.keys()).sort((a, b) => probs[b] - probs[a] || a - b);
    let kept = 0;
    let mass = 0;
    while (kept < order.length && mass < this.params.topP * sum) mass += probs[order[kept++]];
    let target = u * mass;
    for (let i = 0; i < kept; i++) {
      target -= probs[order[i]];
      if (target < 0) return order[i];
    }
    return order[kept - 1];
  }
}

/** Index of the largest logit (lowest index on ties). */
export function argmax(logits: Float32Array): number {
  let best = 0;
  for (let i = 1; i < logits.length; i++) if (logits[i] > logits[best]) best = i;
  return best;
}
