/** The raw bits of a float array, so `toEqual` on them means bit-identical (−0 ≠ +0, NaN payloads count). */
export function bits(a: Float32Array): Uint32Array {
  return new Uint32Array(a.buffer, a.byteOffset, a.length);
}
