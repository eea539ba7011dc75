import { createHash } from 'node:crypto';
import { hexToKey, keyToHex } from '../keys/chunk-key.hasher.js';
import { CHUNK_TOKENS } from '../keys/chunk.constants.js';

/**
 * E caches (a base model's hidden state entering a transition layer, `[token][d_model]` fp32) are
 * kept in the KV tiers like chunks of a model of their own: one per base, one layer deep, a
 * "chunk" holding the 256 positions of one base chunk at one layer. That model's id and keys are
 * a wire contract between nodes (KV events, FetchChunks), so they are derived here, once:
 *
 *   model id  = base ‖ '#e-cache'
 *   key       = SHA-256('mnemo-e-cache\0' ‖ base chunk key (16 bytes) ‖ u32le(layer))[0..16), hex
 *
 * The base chunk key already names model, tenant salt and the whole prefix, so the E key does too.
 */
export function eCacheModelId(base: string): string {
  return `${base}${E_CACHE_SUFFIX}`;
}

/** The base model of an E-cache model id; null for any other model id. */
export function eCacheBaseOf(model: string): string | null {
  return model.endsWith(E_CACHE_SUFFIX) && model.length > E_CACHE_SUFFIX.length ? model.slice(0, -E_CACHE_SUFFIX.length) : null;
}

export function eCacheKey(baseChunkKey: string, layer: number): string {
  if (!Number.isInteger(layer) || layer < 0 || layer > 0xffff_ffff) throw new RangeError(`E-cache layer ${layer} is not a u32`);
  const l = Buffer.alloc(4);
  l.writeUInt32LE(layer, 0);
  return keyToHex(new Uint8Array(createHash('sha256').update(DOMAIN).update(hexToKey(baseChunkKey)).update(l).digest().subarray(0, 16)));
}

/** The E-cache keys of the first `chunks` base chunks at `layer`. */
export function eCacheKeys(baseChunkKeys: readonly string[], layer: number, chunks = baseChunkKeys.length): string[] {
  return baseChunkKeys.slice(0, chunks).map((k) => eCacheKey(k, layer));
}

/** Chunks an E cache of positions [0, until) spans. */
export function eCacheChunks(until: number): number {
  return Math.ceil(Math.max(0, until) / CHUNK_TOKENS);
}

/**
 * Row width of the E-cache model's geometry: a tier segment is `[K|V][256][row]`, so a chunk of
 * `[256][d_model]` fits one segment byte for byte with row = d_model / 2. Null for an odd d_model
 * (no such E cache is kept).
 */
export function eCacheRowElems(dModel: number): number | null {
  return Number.isInteger(dModel) && dModel > 0 && dModel % 2 === 0 ? dModel / 2 : null;
}

const E_CACHE_SUFFIX = '#e-cache';
const DOMAIN = Buffer.from('mnemo-e-cache\0', 'utf8');
