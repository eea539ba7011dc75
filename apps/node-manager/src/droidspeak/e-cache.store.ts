import { CHUNK_TOKENS } from '@mnemo/kv-core';

/**
 * Base models' E caches (hidden state entering a transition layer, `[token][d_model]`) per
 * whole chunk and layer, in host memory under a byte budget, least recently used out first.
 * Kept only where a base prefilled a prompt wholly (nothing from a cache) at the layers its
 * pairs' frontiers restart at; not persisted and not fetched from peers, so after a restart or
 * for a peer's chunks there is none and the node's plan is widened instead.
 *
 * Invariant: `bytes` is the sum of the stored arrays' byte lengths; Map order is recency.
 */
export class ECacheStore {
  private readonly entries = new Map<string, Float32Array>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  get sizeBytes(): number {
    return this.bytes;
  }

  /** Stores the whole chunks of `e` (every prompt position, `[token][d_model]`); `chunkKeys` name them in order. */
  put(model: string, chunkKeys: readonly string[], layer: number, e: Float32Array, promptTokens: number): void {
    const d = e.length / promptTokens;
    if (!Number.isInteger(d) || d <= 0) return;
    const stride = CHUNK_TOKENS * d;
    for (let c = 0; c < chunkKeys.length && (c + 1) * stride <= e.length; c++) {
      if (stride * 4 > this.maxBytes) return;
      const k = key(model, chunkKeys[c]!, layer);
      this.remove(k);
      this.entries.set(k, e.slice(c * stride, (c + 1) * stride));
      this.bytes += stride * 4;
    }
    for (const k of this.entries.keys()) {
      if (this.bytes <= this.maxBytes) break;
      this.remove(k);
    }
  }

  /** E at `layer` of positions [0, until), or undefined unless every chunk it spans is here. */
  get(model: string, chunkKeys: readonly string[], layer: number, until: number): Float32Array | undefined {
    const n = Math.ceil(until / CHUNK_TOKENS);
    if (until <= 0 || n > chunkKeys.length) return undefined;
    const parts: Float32Array[] = [];
    for (let c = 0; c < n; c++) {
      const part = this.entries.get(key(model, chunkKeys[c]!, layer));
      if (!part) return undefined;
      parts.push(part);
    }
    const d = parts[0]!.length / CHUNK_TOKENS;
    const out = new Float32Array(until * d);
    parts.forEach((part, c) => {
      const k = key(model, chunkKeys[c]!, layer);
      // Refresh recency: used E caches stay.
      this.entries.delete(k);
      this.entries.set(k, part);
      out.set(part.subarray(0, Math.min(CHUNK_TOKENS, until - c * CHUNK_TOKENS) * d), c * CHUNK_TOKENS * d);
    });
    return out;
  }

  private remove(k: string): void {
    const old = this.entries.get(k);
    if (!old) return;
    this.entries.delete(k);
    this.bytes -= old.byteLength;
  }
}

function key(model: string, chunkKey: string, layer: number): string {
  return `${model}\u0000${chunkKey}\u0000${layer}`;
}
