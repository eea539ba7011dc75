import { CHUNK_TOKENS, nextChunkKey } from '@mnemo/kv-core';
import { SeededRng } from '../core/seeded.rng.js';

/**
 * A trace's blocks as tokens and as Mnemo's chunk keys. A trace names each block of a prompt by an
 * id whose hash covers the block and every block before it, so one id always follows the same
 * parent: the block's tokens are drawn from a generator seeded by the id, and its chunk keys
 * continue the chain of its parent's last key. Equal ids then give equal token prefixes and equal
 * chunk keys, different ids different ones. Keys come from kv-core's own chain (nextChunkKey), one
 * block at a time and once per block id.
 */
export interface BlockBookOptions {
  /** Tokens per block: a multiple of CHUNK_TOKENS (the trace's own 512, or fewer for CPU-sized runs). */
  readonly tokensPerBlock: number;
  /** The chunk keys' model id and tenant salt (what a live replay sends). */
  readonly model: string;
  readonly salt: string;
  /** Token ids are drawn in [0, vocab). */
  readonly vocab: number;
}

export class TraceBlockBook {
  readonly chunksPerBlock: number;
  private readonly keys = new Map<number, readonly string[]>();
  /** Parent of every block seen (undefined for a first block), to check the trace's chaining. */
  private readonly parents = new Map<number, number | undefined>();

  constructor(readonly o: BlockBookOptions) {
    if (!Number.isInteger(o.tokensPerBlock) || o.tokensPerBlock <= 0 || o.tokensPerBlock % CHUNK_TOKENS !== 0)
      throw new RangeError(`tokens per block must be a positive multiple of ${CHUNK_TOKENS}, got ${o.tokensPerBlock}`);
    if (!Number.isInteger(o.vocab) || o.vocab < 2) throw new RangeError(`vocab must be an integer ≥ 2, got ${o.vocab}`);
    this.chunksPerBlock = o.tokensPerBlock / CHUNK_TOKENS;
  }

  /** Unique blocks keyed so far. */
  get size(): number {
    return this.keys.size;
  }

  /** The block's tokens: a pure function of its id (and the vocabulary and block size). */
  tokens(id: number): Uint32Array {
    const rng = new SeededRng(Math.imul(id ^ 0x5bd1e995, 0x9e3779b1) ^ id);
    const out = new Uint32Array(this.o.tokensPerBlock);
    for (let i = 0; i < out.length; i++) out[i] = Math.floor(rng.next() * this.o.vocab);
    return out;
  }

  /**
   * A prompt's chunk keys from its block ids, the last block holding `lastTokens` tokens: whole
   * chunks only (a partial chunk has no key). Each block is keyed once; a block seen after a
   * different parent than before is an inconsistent trace and throws.
   */
  chunkKeys(ids: readonly number[], lastTokens: number): string[] {
    const out: string[] = [];
    let prev: string | null = null;
    for (let b = 0; b < ids.length; b++) {
      const id = ids[b]!;
      const parent = b === 0 ? undefined : ids[b - 1];
      let keys = this.keys.get(id);
      if (keys === undefined) {
        keys = this.keyBlock(id, prev);
        this.keys.set(id, keys);
        this.parents.set(id, parent);
      } else if (this.parents.get(id) !== parent) {
        throw new RangeError(`block ${id} follows block ${parent} here and block ${this.parents.get(id)} before: not a prefix chain`);
      }
      const whole = b < ids.length - 1 ? this.chunksPerBlock : Math.floor(lastTokens / CHUNK_TOKENS);
      for (let c = 0; c < whole; c++) out.push(keys[c]!);
      prev = keys[keys.length - 1]!;
    }
    return out;
  }

  /** A prompt's tokens (for a live replay): its blocks' tokens, the last cut to `lastTokens`. */
  promptTokens(ids: readonly number[], lastTokens: number): number[] {
    const out: number[] = [];
    ids.forEach((id, b) => {
      const t = this.tokens(id);
      const n = b < ids.length - 1 ? t.length : lastTokens;
      for (let i = 0; i < n; i++) out.push(t[i]!);
    });
    return out;
  }

  private keyBlock(id: number, prev: string | null): string[] {
    const t = this.tokens(id);
    const keys: string[] = [];
    let link = prev;
    for (let c = 0; c < this.chunksPerBlock; c++) {
      link = nextChunkKey(link, this.o.model, this.o.salt, t.subarray(c * CHUNK_TOKENS, (c + 1) * CHUNK_TOKENS));
      keys.push(link);
    }
    return keys;
  }
}
