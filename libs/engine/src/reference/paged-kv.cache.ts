import { BLOCK_TOKENS, BlockAllocator, ErrorCode, MnemoError, SequenceBlockTable } from '@mnemo/kv-core';
import type { KernelBackend, KvGeometry } from '@mnemo/native-cuda';
import { kvDim, type ModelConfig } from '../model/model-config.js';

/** A half-open range of layers and of token positions inside one sequence. */
export interface KvRange {
  readonly layerStart: number;
  readonly layerEnd: number;
  readonly tokenStart: number;
  readonly tokenEnd: number;
}

/**
 * One model's device KV cache: a single tensor in block-major layout
 * `[block][layer][K|V][token][kv_head][head_dim]` (blocks of BLOCK_TOKENS), a
 * BlockAllocator over its block ids and a block table per sequence.
 */
export class PagedKvCache<T> {
  readonly geom: KvGeometry;
  readonly tensor: T;
  readonly allocator: BlockAllocator;
  private readonly tables = new Map<string, SequenceBlockTable>();
  private readonly rowDim: number;

  constructor(
    private readonly backend: KernelBackend<T>,
    config: ModelConfig,
    readonly numBlocks: number,
  ) {
    this.geom = { numLayers: config.layers, numKvHeads: config.kvHeads, headDim: config.headDim, blockSize: BLOCK_TOKENS };
    this.rowDim = kvDim(config);
    this.tensor = backend.alloc(numBlocks * config.layers * 2 * BLOCK_TOKENS * this.rowDim);
    this.allocator = new BlockAllocator(numBlocks);
  }

  has(seqId: string): boolean {
    return this.tables.has(seqId);
  }

  open(seqId: string): void {
    if (this.tables.has(seqId)) throw new MnemoError(ErrorCode.Conflict, `sequence ${seqId} already exists`);
    this.tables.set(seqId, new SequenceBlockTable());
  }

  table(seqId: string): SequenceBlockTable {
    const t = this.tables.get(seqId);
    if (!t) throw new MnemoError(ErrorCode.NotFound, `unknown sequence ${seqId}`);
    return t;
  }

  length(seqId: string): number {
    return this.table(seqId).numTokens;
  }

  /** Blocks that appending `tokens` to each listed sequence would take. */
  blocksNeeded(items: ReadonlyArray<{ seqId: string; tokens: number }>): number {
    return items.reduce((n, it) => n + this.table(it.seqId).blocksNeeded(it.tokens), 0);
  }

  /**
   * Appends tokens to several sequences at once, all or nothing: throws Overloaded
   * before changing anything when the free blocks do not cover the whole batch.
   */
  appendAll(items: ReadonlyArray<{ seqId: string; tokens: number }>): Int32Array[] {
    const need = this.blocksNeeded(items);
    if (need > this.allocator.numFree) {
      throw new MnemoError(ErrorCode.Overloaded, `KV cache full: need ${need} blocks, ${this.allocator.numFree} free`);
    }
    return items.map((it) => this.table(it.seqId).appendFrom(this.allocator, it.tokens)!.slots);
  }

  release(seqId: string): void {
    const t = this.tables.get(seqId);
    if (!t) return;
    this.allocator.release(t.clear());
    this.tables.delete(seqId);
  }

  /** Block tables of `seqIds` packed `[numSeqs, maxBlocks]` (unused entries 0) for pagedAttention. */
  packTables(seqIds: readonly string[]): { blockTables: Int32Array; maxBlocksPerSeq: number } {
    const tables = seqIds.map((s) => this.table(s).blocks);
    const maxBlocksPerSeq = Math.max(1, ...tables.map((t) => t.length));
    const blockTables = new Int32Array(seqIds.length * maxBlocksPerSeq);
    tables.forEach((t, i) => blockTables.set(t, i * maxBlocksPerSeq));
    return { blockTables, maxBlocksPerSeq };
  }

  /**
   * Copies KV of `r` to the host in the chunk payload layout
   * `[layer][K|V][token][kv_head][head_dim]`. The cache is viewed as a table of
   * `[kv_head * head_dim]` rows and gathered with the embedding kernel, so only the
   * requested rows cross to the host, whatever the backend.
   */
  export(seqId: string, r: KvRange): Float32Array {
    const ids = this.rowIds(seqId, r);
    if (ids.length === 0) return new Float32Array(0);
    const out = this.backend.alloc(ids.length * this.rowDim);
    try {
      this.backend.embedding(out, this.tensor, ids, this.rowDim);
      return this.backend.download(out, ids.length * this.rowDim);
    } finally {
      this.backend.free(out);
    }
  }

  /** Writes a host payload (layout as {@link export}) into the sequence's existing token slots. */
  import(seqId: string, r: KvRange, data: Float32Array): void {
    const tokens = r.tokenEnd - r.tokenStart;
    const layerElems = 2 * tokens * this.rowDim;
    if (data.length !== (r.layerEnd - r.layerStart) * layerElems) {
      throw new MnemoError(ErrorCode.InvalidRequest, `KV payload has ${data.length} floats, range needs ${(r.layerEnd - r.layerStart) * layerElems}`);
    }
    this.checkRange(seqId, r);
    if (data.length === 0) return;
    const table = this.table(seqId);
    const slots = new Int32Array(tokens);
    for (let i = 0; i < tokens; i++) slots[i] = table.slotOf(r.tokenStart + i);
    const half = tokens * this.rowDim;
    const k = this.backend.alloc(half);
    const v = this.backend.alloc(half);
    try {
      for (let l = r.layerStart; l < r.layerEnd; l++) {
        const base = (l - r.layerStart) * layerElems;
        this.backend.upload(k, data.subarray(base, base + half));
        this.backend.upload(v, data.subarray(base + half, base + 2 * half));
        this.backend.writeKv(this.tensor, k, v, slots, l, this.geom);
      }
    } finally {
      this.backend.free(k);
      this.backend.free(v);
    }
  }

  free(): void {
    this.backend.free(this.tensor);
    this.tables.clear();
  }

  private checkRange(seqId: string, r: KvRange): void {
    const len = this.length(seqId);
    const ok =
      Number.isInteger(r.layerStart) && Number.isInteger(r.layerEnd) && Number.isInteger(r.tokenStart) && Number.isInteger(r.tokenEnd) &&
      0 <= r.layerStart && r.layerStart <= r.layerEnd && r.layerEnd <= this.geom.numLayers &&
      0 <= r.tokenStart && r.tokenStart <= r.tokenEnd && r.tokenEnd <= len;
    if (!ok) {
      throw new MnemoError(ErrorCode.InvalidRequest, `KV range layers [${r.layerStart},${r.layerEnd}) tokens [${r.tokenStart},${r.tokenEnd}) outside sequence ${seqId} (${len} tokens, ${this.geom.numLayers} layers)`);
    }
  }

  /** Cache row index of every (layer, K|V, token) of `r`, in payload order. */
  private rowIds(seqId: string, r: KvRange): Int32Array {
    this.checkRange(seqId, r);
    const table = this.table(seqId);
    const { numLayers: L, blockSize: B } = this.geom;
    const tokens = r.tokenEnd - r.tokenStart;
    const ids = new Int32Array((r.layerEnd - r.layerStart) * 2 * tokens);
    let i = 0;
    for (let l = r.layerStart; l < r.layerEnd; l++) {
      for (let kv = 0; kv < 2; kv++) {
        for (let t = r.tokenStart; t < r.tokenEnd; t++) {
          const slot = table.slotOf(t);
          const block = Math.floor(slot / B);
          ids[i++] = ((block * L + l) * 2 + kv) * B + (slot % B);
        }
      }
    }
    return ids;
  }
}
