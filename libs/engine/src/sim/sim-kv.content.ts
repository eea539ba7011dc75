import { CHUNK_TOKENS, padChunkPayload } from '@mnemo/kv-core';

/** Shape of a sim model's KV bytes: layers, and K/V row width per token (kv_heads · head_dim), float32. */
export interface SimKvLayout {
  readonly layers: number;
  readonly rowElems: number;
}

/** The layout a `kvBytes` option gives `model`: the one layout, or its entry in a per-model record. */
export function simKvLayoutFor(
  kvBytes: SimKvLayout | Readonly<Record<string, SimKvLayout>> | undefined,
  model: string,
): SimKvLayout | undefined {
  if (!kvBytes) return undefined;
  if (typeof (kvBytes as SimKvLayout).layers === 'number') return kvBytes as SimKvLayout;
  return (kvBytes as Readonly<Record<string, SimKvLayout>>)[model];
}

/** Throws RangeError unless both are positive integers (a row under 1 or a huge layer count is a typo). */
export function validateSimKvLayout(l: SimKvLayout, what: string): SimKvLayout {
  if (!Number.isInteger(l.layers) || l.layers < 1 || l.layers > 1024)
    throw new RangeError(`${what}: layers must be an integer in [1, 1024], got ${l.layers}`);
  if (!Number.isInteger(l.rowElems) || l.rowElems < 1 || l.rowElems > 65_536)
    throw new RangeError(`${what}: rowElems must be an integer in [1, 65536], got ${l.rowElems}`);
  return l;
}

/** Float32 values of one chunk's payload, `[layer][K|V][token][row]`. */
export function chunkElems(l: SimKvLayout): number {
  return l.layers * 2 * CHUNK_TOKENS * l.rowElems;
}

/** murmur3's finaliser: every input bit flips about half the output bits. */
function fmix32(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** A model's seed: FNV-1a of its id, so two models never share KV content. */
export function modelSeed(model: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < model.length; i++) h = Math.imul(h ^ model.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/**
 * One hash per position p of `tokens[0, until)` that depends on the model and on every token up
 * to p — the causal dependence real KV has — so a chunk restored under the wrong history, the
 * wrong model or at the wrong place differs from what the tokens should produce.
 */
export function positionHashes(seed: number, tokens: readonly number[], until: number): Uint32Array {
  const out = new Uint32Array(until);
  let h = seed;
  for (let p = 0; p < until; p++) {
    h = fmix32((Math.imul(h, 31) + tokens[p]! + Math.imul(p, 0x9e3779b9)) >>> 0);
    out[p] = h;
  }
  return out;
}

/**
 * Writes layer `layer` of positions [from, until) into `out` at `offset`, layout `[K|V][token][row]`.
 * Values are multiples of 2⁻²⁴ in [-0.5, 0.5): exact in float32, so bytes survive any copy bit for bit.
 */
export function fillLayer(
  out: Float32Array,
  offset: number,
  hashes: Uint32Array,
  from: number,
  until: number,
  layer: number,
  rowElems: number,
): void {
  const n = until - from;
  let o = offset;
  for (let kv = 0; kv < 2; kv++) {
    const salt = Math.imul(layer * 2 + kv + 1, 0x27d4eb2f);
    for (let p = from; p < until; p++) {
      const s = fmix32((hashes[p]! ^ salt) >>> 0);
      for (let e = 0; e < rowElems; e++) out[o++] = (fmix32((s + Math.imul(e, 0x165667b1)) >>> 0) >>> 8) * 2 ** -24 - 0.5;
    }
  }
  if (o - offset !== 2 * n * rowElems) throw new Error('fillLayer: size invariant broken');
}

/**
 * Export of chunk `chunk` (its first `rows` positions, zero-padded), payload layout `[layer][K|V][token][row]`, regenerated from the
 * tokens.
 */
export function chunkPayload(seed: number, tokens: readonly number[], chunk: number, l: SimKvLayout, rows = CHUNK_TOKENS): Float32Array {
  const from = chunk * CHUNK_TOKENS;
  const until = from + rows;
  const hashes = positionHashes(seed, tokens, until);
  const out = new Float32Array(rows === CHUNK_TOKENS ? chunkElems(l) : 2 * l.layers * rows * l.rowElems);
  const stride = 2 * rows * l.rowElems;
  for (let layer = 0; layer < l.layers; layer++) fillLayer(out, layer * stride, hashes, from, until, layer, l.rowElems);
  return padChunkPayload(l, out, rows);
}

/** True when `got` is bit for bit the layer the tokens give (compared as raw 32-bit words). */
export function layerMatches(got: Float32Array, expected: Float32Array): boolean {
  if (got.length !== expected.length) return false;
  const a = new Uint32Array(got.buffer, got.byteOffset, got.length);
  const b = new Uint32Array(expected.buffer, expected.byteOffset, expected.length);
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
