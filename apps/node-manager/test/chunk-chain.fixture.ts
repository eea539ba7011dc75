// Chunk payloads whose values say which chunk, layer and element they are, and what a layer-wise
// restore of them must return: shared by the offload-tier contract and the RestoreReader specs.
import { chunkKeys, segmentElems, type KvRowGeometry } from '@mnemo/kv-core';
import type { ChunkPayload } from '../src/kv-store/tier.writer.js';

/** A chain of `n` chunks of `model` (tenant salt `t<salt>`). */
export function chunkChain(model: string, g: KvRowGeometry, n: number, salt = 0): ChunkPayload[] {
  const keys = chunkKeys(
    model,
    `t${salt}`,
    Array.from({ length: n * 256 }, (_, i) => (i * 7 + salt) % 250),
  );
  return keys.map((key, position) => ({
    key,
    position,
    payload: Float32Array.from({ length: g.layers * segmentElems(g) }, (_, i) => salt * 1e6 + position * 1e4 + i / 7),
  }));
}

/** K rows then V rows of positions [from, until) of one layer, out of the payloads. */
export function layerOf(g: KvRowGeometry, chunks: readonly ChunkPayload[], layer: number, from: number, until: number): Float32Array {
  const n = until - from;
  const out = new Float32Array(2 * n * g.rowElems);
  for (let t = from; t < until; t++) {
    const p = chunks[Math.floor(t / 256)]!.payload;
    const base = layer * segmentElems(g) + (t % 256) * g.rowElems;
    out.set(p.subarray(base, base + g.rowElems), (t - from) * g.rowElems);
    out.set(p.subarray(base + 256 * g.rowElems, base + 257 * g.rowElems), (n + t - from) * g.rowElems);
  }
  return out;
}

/**
 * Loads the layers of `order` from `reader`, each bit-exact against `want`, then checks the array of
 * the last load stays valid through the next load and the copies it starts ahead; releases the reader.
 */
export async function expectLoads(
  reader: { load(layer: number): Promise<Float32Array>; release(): void },
  order: readonly number[],
  want: (layer: number) => Float32Array,
): Promise<void> {
  try {
    for (const l of order) expect((await reader.load(l)).slice()).toEqual(want(l));
    const kept = await reader.load(0);
    const copy = kept.slice();
    await reader.load(1);
    expect(kept).toEqual(copy);
  } finally {
    reader.release();
  }
}
