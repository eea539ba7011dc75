/** Where a search for a cost's scale ended: the closest scale tried, what the twin measured there, how it went. */
export interface ScaleSearch {
  readonly scale: number;
  /** What `measure` gave at `scale` (NaN: nothing measured). */
  readonly value: number;
  readonly iterations: number;
  /** `value` came within the tolerance of the target. */
  readonly converged: boolean;
}

export interface ScaleSearchOptions {
  /** Close enough: |value ÷ target − 1| at most this. */
  readonly tolerance: number;
  readonly maxIterations: number;
  /** The range a step may move the scale in. */
  readonly min: number;
  readonly max: number;
}

/**
 * The factor on a cost at which a twin replay measures `target`, for a `measure` that grows with it
 * but not exactly (a slower link or path also changes which node a router picks, and the draws move
 * with it): a multiplicative step until the target is bracketed, then halving the bracket on a log
 * scale. The closest scale tried is kept; a replay that measures nothing (≤ 0, NaN) ends the search.
 */
export function searchScale(target: number, measure: (scale: number) => number, o: ScaleSearchOptions): ScaleSearch {
  const miss = (v: number) => (v > 0 ? Math.abs(Math.log(v / target)) : Infinity);
  const near = (v: number) => Math.abs(v / target - 1) <= o.tolerance;
  let best = { scale: 1, value: NaN };
  let [lo, hi] = [NaN, NaN];
  let scale = 1;
  let iterations = 0;
  while (iterations < o.maxIterations) {
    iterations++;
    const value = measure(scale);
    if (!(value > 0)) break;
    if (!(miss(best.value) <= miss(value))) best = { scale, value };
    if (near(value)) break;
    if (value < target) lo = scale;
    else hi = scale;
    scale = Number.isNaN(lo) || Number.isNaN(hi) ? Math.min(o.max, Math.max(o.min, scale * (target / value))) : Math.sqrt(lo * hi);
  }
  return { ...best, iterations, converged: near(best.value) };
}
