/**
 * A prefill whose cached prefix is loaded one layer at a time while earlier layers compute
 * (SwiftCache §3.3; LMCache's layer-wise, asynchronous retrieval; Mnemo's restore): layer i
 * computes once its KV is in and layer i − 1 has computed; loads run back to back from `startMs`
 * (0: issued when the request is scheduled). Returns when the last layer's compute ends, ms.
 */
export function layerwisePrefillMs(layers: number, loadMsPerLayer: number, computeMsPerLayer: number, startMs = 0): number {
  if (!Number.isInteger(layers) || layers <= 0) throw new RangeError(`layers must be a positive integer, got ${layers}`);
  if (!(loadMsPerLayer >= 0) || !(computeMsPerLayer >= 0)) throw new RangeError('per-layer times must be ≥ 0');
  let loaded = startMs;
  let computed = 0;
  for (let l = 0; l < layers; l++) {
    loaded += loadMsPerLayer;
    computed = Math.max(computed, loaded) + computeMsPerLayer;
  }
  return computed;
}
