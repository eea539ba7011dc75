import {
  BLOCK_TOKENS,
  ErrorCode,
  KvBlockLedger,
  MnemoError,
  type BlockGroupOptions,
  type DeviceChunkEvent,
  type LedgerAppend,
} from '@mnemo/kv-core';
import type { KernelBackend, KvGeometry } from '@mnemo/native-cuda';
import { kvDim, type ModelConfig } from '../model/model-config.js';
import type { KvRestoreTarget } from '../engine.interface.js';

/** A half-open range of layers and of token positions inside one sequence. */
export interface KvRange {
  readonly layerStart: number;
  readonly layerEnd: number;
  readonly tokenStart: number;
  readonly tokenEnd: number;
}

/**
 * One model's device KV cache: a single tensor in block-major layout
 * `[block][layer][K|V][token][kv_head][head_dim]` (blocks of BLOCK_TOKENS) and the
 * {@link KvBlockLedger} that hands its blocks to sequences — with automatic prefix
 * sharing: finished sequences' full blocks stay cached (LRU) until memory is needed.
 */
export class PagedKvCache<T> {
  readonly geom: KvGeometry;
  readonly tensor: T;
  readonly ledger: KvBlockLedger;
  private readonly rowDim: number;

  constructor(
    private readonly backend: KernelBackend<T>,
    config: ModelConfig,
    readonly numBlocks: number,
    onChunk?: (e: DeviceChunkEvent) => void,
    /**
     * Blocks the tensor has room for: an elastic cache reserves what it may grow to (untouched
     * pages cost nothing until written on the CPU backend) and its block manager's capacity
     * moves below that, at the end, in O(1).
     */
    readonly reserveBlocks: number = numBlocks,
    grouping?: BlockGroupOptions,
  ) {
    if (!Number.isInteger(reserveBlocks) || reserveBlocks < numBlocks)
      throw new RangeError(`reserve of ${reserveBlocks} blocks is below the ${numBlocks} the cache starts with`);
    this.geom = { numLayers: config.layers, numKvHeads: config.kvHeads, headDim: config.headDim, blockSize: BLOCK_TOKENS };
    this.rowDim = kvDim(config);
    this.tensor = backend.alloc(reserveBlocks * config.layers * 2 * BLOCK_TOKENS * this.rowDim);
    this.ledger = new KvBlockLedger(config.id, numBlocks, onChunk, grouping);
  }

  has(seqId: string): boolean {
    return this.ledger.has(seqId);
  }

  /** Every layer is resident: layer l is plane l. */
  planeOf(layer: number): number {
    return layer;
  }

  /** A new empty sequence; with a `salt` it takes part in prefix sharing under that salt. */
  open(seqId: string, salt?: string): void {
    if (this.ledger.has(seqId)) throw new MnemoError(ErrorCode.Conflict, `sequence ${seqId} already exists`);
    this.ledger.open(seqId, salt);
  }

  length(seqId: string): number {
    this.known(seqId);
    return this.ledger.length(seqId);
  }

  /** Starts an empty sharing sequence with the cached prefix of `tokens`; returns the tokens it covers. */
  attachPrefix(seqId: string, tokens: readonly number[]): number {
    this.known(seqId);
    return this.ledger.attachPrefix(seqId, tokens);
  }

  /** Blocks that appending `tokens` to each listed sequence would take. */
  blocksNeeded(items: ReadonlyArray<{ seqId: string; tokens: number }>): number {
    for (const it of items) this.known(it.seqId);
    return this.ledger.blocksNeeded(items);
  }

  /**
   * Appends tokens to several sequences at once, all or nothing: throws Overloaded before
   * changing anything when the available blocks do not cover the whole batch.
   */
  appendAll(items: readonly LedgerAppend[]): Int32Array[] {
    for (const it of items) this.known(it.seqId);
    const slots = this.ledger.append(items);
    if (!slots) {
      throw new MnemoError(
        ErrorCode.Overloaded,
        `KV cache full: need ${this.ledger.blocksNeeded(items)} blocks, ${this.ledger.blocks.numAvailable} available`,
      );
    }
    return slots;
  }

  /** Names the sequences' full blocks for sharing; call once their KV is written. */
  commit(seqIds: readonly string[]): void {
    this.ledger.commit(seqIds);
  }

  release(seqId: string): void {
    this.ledger.release(seqId);
  }

  /** Block tables of `seqIds` packed `[numSeqs, maxBlocks]` (unused entries 0) for pagedAttention. */
  packTables(seqIds: readonly string[]): { blockTables: Int32Array; maxBlocksPerSeq: number } {
    const tables = seqIds.map((s) => {
      this.known(s);
      return this.ledger.blockIds(s);
    });
    const maxBlocksPerSeq = Math.max(1, ...tables.map((t) => t.length));
    const blockTables = new Int32Array(seqIds.length * maxBlocksPerSeq);
    tables.forEach((t, i) => blockTables.set(t, i * maxBlocksPerSeq));
    return { blockTables, maxBlocksPerSeq };
  }

  /**
   * Copies KV of `r` to the host in the chunk payload layout
   * `[layer][K|V][token][kv_head][head_dim]`. The cache is viewed as a table of
   * `[kv_head * head_dim]` rows and gathered with the embedding kernel, so only the
   * requested rows cross to the host, whatever the backend. With `into` (exactly as long as the
   * range) the rows land there, and on a host-memory backend they are gathered straight into it.
   */
  export(seqId: string, r: KvRange, into?: Float32Array): Float32Array {
    const ids = this.rowIds(seqId, r);
    const elems = ids.length * this.rowDim;
    if (into && into.length !== elems)
      throw new MnemoError(ErrorCode.InvalidRequest, `KV export target has ${into.length} floats, the range has ${elems}`);
    if (ids.length === 0) return into ?? new Float32Array(0);
    if (into && this.backend.hostView) {
      this.backend.embedding(this.backend.hostView(into), this.tensor, ids, this.rowDim);
      return into;
    }
    const out = this.backend.alloc(elems);
    // Host tensors (cpu): the gathered rows are already a fresh host array nothing else holds,
    // so they are handed over as they are; a second multi-MiB copy would sit on the pass's
    // commit path, where chunks are exported.
    const hostArray = this.backend.hostArray?.bind(this.backend);
    try {
      this.backend.embedding(out, this.tensor, ids, this.rowDim);
      const host = hostArray ? hostArray(out) : this.backend.download(out, elems);
      if (!into) return host;
      into.set(host);
      return into;
    } finally {
      if (!hostArray) this.backend.free(out);
    }
  }

  /** Cache slot of each of the sequence's tokens in [tokenStart, tokenEnd). */
  slots(seqId: string, tokenStart: number, tokenEnd: number): Int32Array {
    this.checkRange(seqId, { layerStart: 0, layerEnd: 0, tokenStart, tokenEnd });
    const slots = new Int32Array(tokenEnd - tokenStart);
    for (let i = 0; i < slots.length; i++) slots[i] = this.ledger.slotOf(seqId, tokenStart + i);
    return slots;
  }

  /**
   * Where layer `layer` of the tokens at `slots` lies in the cache, for a restore that writes it
   * there itself; undefined when the cache is not in host memory (only the CPU backend's is).
   */
  hostTarget(slots: Int32Array, layer: number): KvRestoreTarget | undefined {
    if (!this.backend.hostView || !(this.tensor instanceof Float32Array)) return undefined;
    const { numLayers: L, blockSize: B } = this.geom;
    if (!Number.isInteger(layer) || layer < 0 || layer >= L)
      throw new MnemoError(ErrorCode.InvalidRequest, `layer ${layer} outside [0, ${L})`);
    const plane = B * this.rowDim;
    const kOffsets = new Float64Array(slots.length);
    const vOffsets = new Float64Array(slots.length);
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i]!;
      if (slot < 0) throw new MnemoError(ErrorCode.InvalidRequest, `restore target for an unallocated token (slot ${slot})`);
      const block = Math.floor(slot / B);
      const k = (block * L + layer) * 2 * plane + (slot % B) * this.rowDim;
      kOffsets[i] = this.tensor.byteOffset + k * 4;
      vOffsets[i] = this.tensor.byteOffset + (k + plane) * 4;
    }
    return { buffer: this.tensor.buffer as ArrayBuffer, kOffsets, vOffsets, rowBytes: this.rowDim * 4 };
  }

  /**
   * Writes a host payload (layout as {@link export}) into the sequence's existing token slots.
   * `slots`, from {@link slots} for the same tokens, spares a layer-wise restore looking them up
   * again for every layer; a sequence's slots stay put while a pass holds it.
   */
  import(seqId: string, r: KvRange, data: Float32Array, known?: Int32Array): void {
    const tokens = r.tokenEnd - r.tokenStart;
    const layerElems = 2 * tokens * this.rowDim;
    if (data.length !== (r.layerEnd - r.layerStart) * layerElems) {
      throw new MnemoError(
        ErrorCode.InvalidRequest,
        `KV payload has ${data.length} floats, range needs ${(r.layerEnd - r.layerStart) * layerElems}`,
      );
    }
    if (known && known.length !== tokens) throw new MnemoError(ErrorCode.InvalidRequest, `${known.length} slots for ${tokens} tokens`);
    this.checkRange(seqId, r);
    if (data.length === 0) return;
    this.writeRows(known ?? this.slots(seqId, r.tokenStart, r.tokenEnd), r.layerStart, r.layerEnd, data);
  }

  /**
   * Writes a whole chunk payload (every layer, in the {@link export} layout) into blocks `ids`,
   * which no sequence holds: a prefetched chunk staged ahead of its request. Lower layers first.
   */
  writeBlocks(ids: readonly number[], data: Float32Array): void {
    const B = this.geom.blockSize;
    const slots = new Int32Array(ids.length * B);
    ids.forEach((id, i) => {
      if (!Number.isInteger(id) || id < 0 || id >= this.ledger.blocks.capacity)
        throw new MnemoError(ErrorCode.InvalidRequest, `no device block ${id}`);
      for (let t = 0; t < B; t++) slots[i * B + t] = id * B + t;
    });
    if (data.length !== this.geom.numLayers * 2 * slots.length * this.rowDim) {
      throw new MnemoError(
        ErrorCode.InvalidRequest,
        `KV payload has ${data.length} floats, ${ids.length} blocks need ${this.geom.numLayers * 2 * slots.length * this.rowDim}`,
      );
    }
    this.writeRows(slots, 0, this.geom.numLayers, data);
  }

  /** Layers [layerStart, layerEnd) of a payload of `slots.length` tokens into those cache slots. */
  private writeRows(slots: Int32Array, layerStart: number, layerEnd: number, data: Float32Array): void {
    const tokens = slots.length;
    const layerElems = 2 * tokens * this.rowDim;
    const half = tokens * this.rowDim;
    const view = this.backend.hostView?.bind(this.backend);
    if (view) {
      for (let l = layerStart; l < layerEnd; l++) {
        const base = (l - layerStart) * layerElems;
        this.backend.writeKv(
          this.tensor,
          view(data.subarray(base, base + half)),
          view(data.subarray(base + half, base + 2 * half)),
          slots,
          l,
          this.geom,
        );
      }
      return;
    }
    const k = this.backend.alloc(half);
    const v = this.backend.alloc(half);
    try {
      for (let l = layerStart; l < layerEnd; l++) {
        const base = (l - layerStart) * layerElems;
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
  }

  private known(seqId: string): void {
    if (!this.ledger.has(seqId)) throw new MnemoError(ErrorCode.NotFound, `unknown sequence ${seqId}`);
  }

  private checkRange(seqId: string, r: KvRange): void {
    const len = this.length(seqId);
    const ok =
      Number.isInteger(r.layerStart) &&
      Number.isInteger(r.layerEnd) &&
      Number.isInteger(r.tokenStart) &&
      Number.isInteger(r.tokenEnd) &&
      0 <= r.layerStart &&
      r.layerStart <= r.layerEnd &&
      r.layerEnd <= this.geom.numLayers &&
      0 <= r.tokenStart &&
      r.tokenStart <= r.tokenEnd &&
      r.tokenEnd <= len;
    if (!ok) {
      throw new MnemoError(
        ErrorCode.InvalidRequest,
        `KV range layers [${r.layerStart},${r.layerEnd}) tokens [${r.tokenStart},${r.tokenEnd}) ` +
          `outside sequence ${seqId} (${len} tokens, ${this.geom.numLayers} layers)`,
      );
    }
  }

  /** Cache row index of every (layer, K|V, token) of `r`, in payload order. */
  private rowIds(seqId: string, r: KvRange): Int32Array {
    this.checkRange(seqId, r);
    const { numLayers: L, blockSize: B } = this.geom;
    const tokens = r.tokenEnd - r.tokenStart;
    const ids = new Int32Array((r.layerEnd - r.layerStart) * 2 * tokens);
    let i = 0;
    for (let l = r.layerStart; l < r.layerEnd; l++) {
      for (let kv = 0; kv < 2; kv++) {
        for (let t = r.tokenStart; t < r.tokenEnd; t++) {
          const slot = this.ledger.slotOf(seqId, t);
          const block = Math.floor(slot / B);
          ids[i++] = ((block * L + l) * 2 + kv) * B + (slot % B);
        }
      }
    }
    return ids;
  }
}
