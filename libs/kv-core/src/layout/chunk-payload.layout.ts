import { CHUNK_TOKENS } from '../keys/chunk.constants.js';

/** What the offload tiers need to know of a model's KV: layers and elements per token row. */
export interface KvRowGeometry {
  readonly layers: number;
  /** Elements of one token's K (or V) row in one layer: kv_heads · head_dim. */
  readonly rowElems: number;
}

/** One contiguous copy between a chunk payload and a layer payload, in elements. */
export interface PayloadPiece {
  /** Index of the chunk (position / 256) the piece belongs to. */
  readonly chunk: number;
  /** Offset inside that chunk's payload `[layer][K|V][token][row]`. */
  readonly src: number;
  /** Offset inside the layer payload `[K|V][token][row]` of the requested positions. */
  readonly dst: number;
  readonly len: number;
}

/** Elements of one segment: one layer of one chunk, K and V (`[K|V][256][row]`). */
export function segmentElems(g: KvRowGeometry): number {
  return 2 * CHUNK_TOKENS * g.rowElems;
}

/** Elements of a whole chunk payload `[layer][K|V][256][row]`. */
export function chunkElems(g: KvRowGeometry): number {
  return g.layers * segmentElems(g);
}

/**
 * The copies that assemble layer `layer` of positions [from, until) — the layout a layer-wise
 * load hands the engine, `[K|V][until-from][row]` — out of chunk payloads (chunks may be cut at
 * either end). Two pieces per chunk touched: its K rows and its V rows.
 */
export function layerPieces(g: KvRowGeometry, layer: number, from: number, until: number): PayloadPiece[] {
  if (!Number.isInteger(layer) || layer < 0 || layer >= g.layers) throw new RangeError(`layer ${layer} outside [0, ${g.layers})`);
  if (!Number.isInteger(from) || !Number.isInteger(until) || from < 0 || until < from)
    throw new RangeError(`bad position range [${from}, ${until})`);
  const row = g.rowElems;
  const n = until - from;
  const pieces: PayloadPiece[] = [];
  for (let c = Math.floor(from / CHUNK_TOKENS); c * CHUNK_TOKENS < until; c++) {
    const a = Math.max(from, c * CHUNK_TOKENS);
    const b = Math.min(until, (c + 1) * CHUNK_TOKENS);
    if (b <= a) continue;
    const inChunk = (a - c * CHUNK_TOKENS) * row;
    const base = layer * segmentElems(g);
    pieces.push({ chunk: c, src: base + inChunk, dst: (a - from) * row, len: (b - a) * row });
    pieces.push({ chunk: c, src: base + CHUNK_TOKENS * row + inChunk, dst: (n + a - from) * row, len: (b - a) * row });
  }
  return pieces;
}

/**
 * A chunk payload for the first `tokens` positions of a chunk, in the whole chunk's layout (the
 * one the offload tiers store and restore): `compact` is `[layer][K|V][tokens][row]`, the
 * result `[layer][K|V][256][row]` with rows past `tokens` zero. Restores of positions below
 * `tokens` then read it like any chunk. With `into` (a whole chunk payload long, any contents)
 * the result is written there, padding rows zeroed, and `into` returned.
 */
export function padChunkPayload(g: KvRowGeometry, compact: Float32Array, tokens: number, into?: Float32Array): Float32Array {
  if (!Number.isInteger(tokens) || tokens < 1 || tokens > CHUNK_TOKENS)
    throw new RangeError(`partial chunk of ${tokens} tokens outside [1, ${CHUNK_TOKENS}]`);
  const half = tokens * g.rowElems;
  if (compact.length !== g.layers * 2 * half)
    throw new RangeError(`partial chunk payload has ${compact.length} elements, ${tokens} tokens need ${g.layers * 2 * half}`);
  if (into && into.length !== chunkElems(g))
    throw new RangeError(`chunk payload target has ${into.length} elements, a chunk needs ${chunkElems(g)}`);
  if (tokens === CHUNK_TOKENS && !into) return compact;
  if (into === compact) return into;
  const out = into ?? new Float32Array(chunkElems(g));
  const full = CHUNK_TOKENS * g.rowElems;
  for (let i = 0; i < 2 * g.layers; i++) {
    out.set(compact.subarray(i * half, (i + 1) * half), i * full);
    if (into) out.fill(0, i * full + half, (i + 1) * full);
  }
  return out;
}
