// The arithmetic every benchmark shares: seeded randomness, rounding, ratios and arguments, beside
// kv-core's order statistics. One definition of each, so that a p99 or a counter means the same
// thing in every results file (they used to differ bench by bench: one counter summed the matching
// series and another returned the first; one percentile took p in percent, another as a fraction).
export { mean, median, percentile, quantile } from '@mnemo/kv-core';

/** Seeded uniform [0, 1) generator (mulberry32): the same seed gives the same workload everywhere. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A log-normal draw with the given median (Box–Muller on two draws of `r`). */
export function lognormal(r: () => number, median: number, sigma: number): number {
  const u = Math.max(1e-9, r());
  const v = r();
  return median * Math.exp(sigma * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v));
}

/** An exponential draw with the given mean: the gap between Poisson arrivals. */
export function exponential(r: () => number, mean: number): number {
  return -mean * Math.log(1 - r());
}

/** `x` rounded to an integer inside [lo, hi]. */
export const clamp = (x: number, lo: number, hi: number): number => Math.max(lo, Math.min(hi, Math.round(x)));

/** `x` to `d` decimals; null stays null (a missing figure is written as null, never as 0). */
export function round(x: number | null | undefined, d = 2): number | null {
  if (x === null || x === undefined || Number.isNaN(x)) return null;
  return Math.round(x * 10 ** d) / 10 ** d;
}

/** `a / b` rounded, or null when either is missing or b is 0 (no ratio rather than Infinity). */
export function ratio(a: number | null | undefined, b: number | null | undefined, d = 2): number | null {
  if (a === null || a === undefined || b === null || b === undefined || b === 0) return null;
  return round(a / b, d);
}

/** Command-line `--name value` (or `--name=value`), else `fallback`. */
export function arg(name: string, fallback: string | undefined, argv: readonly string[] = process.argv): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === `--${name}` && i + 1 < argv.length) return argv[i + 1];
    if (argv[i]!.startsWith(`--${name}=`)) return argv[i]!.slice(name.length + 3);
  }
  return fallback;
}
