/**
 * The p-th percentile by nearest rank (the smallest value with at least p % of the values at or
 * below it): the definition bench/lib/figures.mjs uses, so twin and live figures compare alike.
 * Null for no values. Sorts a copy.
 */
export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const s = Float64Array.from(values).sort();
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}
