import type { HeldKv } from '../engine.interface.js';

/**
 * Host copy of one sequence's KV by logical block, in segments of `segmentBlocks` blocks
 * `[block][layer][K|V][token][kv_head][head_dim]` floats each, so it grows without moving
 * what is already copied. The first `base` blocks are not in it: the KV store's host pool
 * keeps them (`held`, pinned), and the segments start at block `base`.
 */
export interface HostKvCopy {
  readonly segments: Float32Array[];
  /** Tokens whose KV the copy held after its last swap-out; the full blocks among them stay valid (KV is append-only). */
  tokens: number;
  readonly base: number;
  readonly held?: HeldKv;
}

/**
 * The host memory swapped-out sequences' KV lives in, under a byte limit. A copy outlives the
 * swap-in that reads it (FastSwitch §3.3): the next swap-out of the sequence copies only
 * blocks written since; each copy keeps `incrementBlocks` of room past its blocks for them.
 */
export class KvSwapSpace {
  private readonly copies = new Map<string, HostKvCopy>();
  private used = 0;

  constructor(
    /** Floats per block: layers · 2 · block tokens · kv_heads · head_dim. */
    readonly blockElems: number,
    readonly segmentBlocks: number,
    readonly incrementBlocks: number,
    readonly limitBytes: number,
  ) {
    for (const [k, v] of Object.entries({ blockElems, segmentBlocks }))
      if (!Number.isInteger(v) || v < 1) throw new RangeError(`${k} must be a positive integer, got ${v}`);
    if (!Number.isInteger(incrementBlocks) || incrementBlocks < 0)
      throw new RangeError(`incrementBlocks must be a non-negative integer, got ${incrementBlocks}`);
    if (!(limitBytes >= 0)) throw new RangeError(`limitBytes must be ≥ 0, got ${limitBytes}`);
  }

  get bytesUsed(): number {
    return this.used;
  }

  get size(): number {
    return this.copies.size;
  }

  get(seqId: string): HostKvCopy | undefined {
    return this.copies.get(seqId);
  }

  /**
   * The sequence's copy with room for `blocks` blocks plus the increment reserve; null —
   * and the copy unchanged — when that would pass the limit. `held` (taken only by a new
   * copy) names leading blocks kept elsewhere, which the copy then leaves out; the caller
   * releases it when the copy is not made.
   */
  reserve(seqId: string, blocks: number, held?: { readonly kv: HeldKv; readonly blocks: number }): HostKvCopy | null {
    const copy = this.copies.get(seqId) ?? { segments: [], tokens: 0, base: held?.blocks ?? 0, ...(held ? { held: held.kv } : {}) };
    const need = Math.ceil((Math.max(0, blocks - copy.base) + this.incrementBlocks) / this.segmentBlocks) - copy.segments.length;
    const bytes = Math.max(0, need) * this.segmentBlocks * this.blockElems * 4;
    if (this.used + bytes > this.limitBytes) return null;
    for (let i = 0; i < need; i++) copy.segments.push(new Float32Array(this.segmentBlocks * this.blockElems));
    this.used += bytes;
    this.copies.set(seqId, copy);
    return copy;
  }

  /** Forgets the sequence's copy (finished, or its host bytes can no longer be trusted) and lets its held KV go. */
  drop(seqId: string): void {
    const copy = this.copies.get(seqId);
    if (!copy) return;
    this.used -= copy.segments.length * this.segmentBlocks * this.blockElems * 4;
    this.copies.delete(seqId);
    copy.held?.release();
  }
}
