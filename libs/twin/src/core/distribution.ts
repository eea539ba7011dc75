import type { SeededRng } from './seeded.rng.js';

/**
 * A measured quantity as an empirical distribution: sorted samples (a microbenchmark's), drawn
 * by inverse CDF with linear interpolation between neighbours. A constant is one sample. Draws
 * allocate nothing.
 */
export class Distribution {
  private readonly sorted: Float64Array;

  constructor(samples: readonly number[]) {
    if (samples.length === 0) throw new RangeError('a distribution needs at least one sample');
    for (const s of samples)
      if (!Number.isFinite(s) || s < 0) throw new RangeError(`distribution samples must be finite and ≥ 0, got ${s}`);
    this.sorted = Float64Array.from(samples).sort();
  }

  static constant(v: number): Distribution {
    return new Distribution([v]);
  }

  get mean(): number {
    let s = 0;
    for (const x of this.sorted) s += x;
    return s / this.sorted.length;
  }

  /** The q-quantile, q in [0, 1]. */
  quantile(q: number): number {
    const n = this.sorted.length;
    if (n === 1) return this.sorted[0]!;
    const x = Math.min(1, Math.max(0, q)) * (n - 1);
    const i = Math.floor(x);
    const f = x - i;
    return i + 1 < n ? this.sorted[i]! * (1 - f) + this.sorted[i + 1]! * f : this.sorted[i]!;
  }

  draw(rng: SeededRng): number {
    return this.sorted.length === 1 ? this.sorted[0]! : this.quantile(rng.next());
  }

  /** The samples, sorted (for reports). */
  samples(): number[] {
    return Array.from(this.sorted);
  }
}
