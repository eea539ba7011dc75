/** The raw bits of a float array, so `toEqual` on them means bit-identical (−0 ≠ +0, NaN payloads count). */
export function bits(a: Float32Array): Uint32Array {
  return new Uint32Array(a.buffer, a.byteOffset, a.length);
}

/**
 * Index of the first element whose bits differ (or the shorter length when only the lengths do); -1 when bit-identical. Cheap to report on
 * multi-MiB arrays, where a toEqual diff is not.
 */
export function firstBitDifference(a: Float32Array, b: Float32Array): number {
  const x = bits(a);
  const y = bits(b);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) if (x[i] !== y[i]) return i;
  return x.length === y.length ? -1 : n;
}
