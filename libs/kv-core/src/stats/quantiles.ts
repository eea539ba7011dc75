/**
 * Order statistics shared by the twin, the benchmarks and the tools, so that a p99 means one thing
 * in every results file. Missing samples (null, undefined, NaN) are left out; each returns null
 * when none is left (a missing figure is written as null, never as 0). Each sorts a copy.
 */
export type Samples = ReadonlyArray<number | null | undefined>;

const present = (xs: Samples): number[] => xs.filter((x): x is number => typeof x === 'number' && !Number.isNaN(x));
const sorted = (xs: Samples): Float64Array => Float64Array.from(present(xs)).sort();

/**
 * The nearest-rank percentile, `p` in percent (0–100]: the smallest sample with at least p% of the
 * samples at or below it, so p99 of 100 samples is the 99th, not the largest.
 */
export function percentile(xs: Samples, p: number): number | null {
  if (!(p > 0 && p <= 100)) throw new RangeError(`percentile: p must be in (0, 100], got ${p}`);
  const s = sorted(xs);
  if (s.length === 0) return null;
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

/**
 * The quantile `q` in [0, 1] by linear interpolation between the two nearest samples (R's type 7),
 * for calibrations that take a low quantile of few timings.
 */
export function quantile(xs: Samples, q: number): number | null {
  if (!(q >= 0 && q <= 1)) throw new RangeError(`quantile: q must be in [0, 1], got ${q}`);
  const s = sorted(xs);
  if (s.length === 0) return null;
  const x = q * (s.length - 1);
  const i = Math.floor(x);
  return i + 1 < s.length ? s[i]! * (1 - (x - i)) + s[i + 1]! * (x - i) : s[i]!;
}

/** The median; the mean of the two middle samples when the count is even. */
export function median(xs: Samples): number | null {
  const s = sorted(xs);
  if (s.length === 0) return null;
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** The arithmetic mean, summed in the samples' own order. */
export function mean(xs: Samples): number | null {
  const s = present(xs);
  return s.length === 0 ? null : s.reduce((a, b) => a + b, 0) / s.length;
}
