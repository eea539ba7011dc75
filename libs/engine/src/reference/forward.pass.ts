import { type AttentionBatch, type KernelBackend, type KernelCall, type KvGeometry, kernelCall } from '@mnemo/native-cuda';
import type { DeviceModel } from './device-model.js';

/**
 * What a pass needs of a KV cache: its tensor, geometry and block tables, and which plane of the
 * tensor holds layer l — l itself in a full cache, a slot of the prefetch window in a layer
 * stream cache (only the active layers are resident there).
 */
export interface KvPlanes<T> {
  readonly tensor: T;
  readonly geom: KvGeometry;
  packTables(seqIds: readonly string[]): { blockTables: Int32Array; maxBlocksPerSeq: number };
  planeOf(layer: number): number;
}

/** The rows one sequence contributes to a pass. */
export interface PassSeq {
  readonly seqId: string;
  /** Rows of this sequence in the pass: positions contextLen - rows … contextLen - 1. */
  readonly rows: number;
  /** Tokens of the sequence in the cache including these rows. */
  readonly contextLen: number;
  /** Cache slot of each row, when the pass writes KV; absent for query-only rows. */
  readonly slots?: Int32Array;
}

/**
 * One forward pass over a packed batch of rows from several sequences (prefill
 * chunks and decode rows mixed), stepped a layer at a time so the caller can make
 * each layer's KV resident just before it runs. Holds the residual stream `x`
 * `[rows, d_model]` between layers. Call {@link dispose} when done.
 *
 * A layer is one kernel list submitted to the backend (`submit`): on the CPU backend it
 * runs on the addon's own threads and the JS thread is free until its Promise settles.
 * While a layer runs, JS must not touch this pass's buffers or the layer's planes of the
 * cache (other layers' planes may be imported meanwhile: layer-wise loads).
 */
export class ForwardPass<T> {
  readonly numRows: number;
  readonly batch: AttentionBatch;
  readonly positions: Int32Array;
  private readonly slots: Int32Array | null;
  private readonly x: T;
  private readonly bufs: T[] = [];
  private readonly h: T;
  private readonly q: T;
  private readonly k: T;
  private readonly v: T;
  private readonly attn: T;
  private readonly o: T;
  private readonly gate: T;
  private readonly up: T;

  constructor(
    private readonly backend: KernelBackend<T>,
    private readonly model: DeviceModel<T>,
    private readonly cache: KvPlanes<T>,
    readonly seqs: readonly PassSeq[],
  ) {
    const c = model.config;
    const queryStart = new Int32Array(seqs.length + 1);
    const contextLen = new Int32Array(seqs.length);
    seqs.forEach((s, i) => {
      queryStart[i + 1] = queryStart[i] + s.rows;
      contextLen[i] = s.contextLen;
    });
    const R = (this.numRows = queryStart[seqs.length]);
    this.positions = new Int32Array(R);
    seqs.forEach((s, i) => {
      for (let r = 0; r < s.rows; r++) this.positions[queryStart[i] + r] = s.contextLen - s.rows + r;
    });
    const writes = seqs.filter((s) => s.slots !== undefined).length;
    if (writes !== 0 && writes !== seqs.length) throw new Error('a pass either writes KV for every sequence or for none');
    if (writes > 0) {
      this.slots = new Int32Array(R);
      seqs.forEach((s, i) => this.slots!.set(s.slots!, queryStart[i]));
    } else this.slots = null;
    const { blockTables, maxBlocksPerSeq } = cache.packTables(seqs.map((s) => s.seqId));
    this.batch = { numSeqs: seqs.length, queryStart, contextLen, blockTables, maxBlocksPerSeq };

    const qDim = c.heads * c.headDim;
    const kvd = c.kvHeads * c.headDim;
    const a = (n: number): T => {
      const t = backend.alloc(Math.max(1, n));
      this.bufs.push(t);
      return t;
    };
    this.x = a(R * c.dModel);
    this.h = a(R * c.dModel);
    this.q = a(R * qDim);
    this.k = a(R * kvd);
    this.v = a(R * kvd);
    this.attn = a(R * qDim);
    this.o = a(R * c.dModel);
    this.gate = a(R * c.ffn);
    this.up = a(R * c.ffn);
  }

  get writesKv(): boolean {
    return this.slots !== null;
  }

  embed(tokens: Int32Array): void {
    if (tokens.length !== this.numRows) throw new Error(`embed: ${tokens.length} tokens for ${this.numRows} rows`);
    this.backend.embedding(this.x, this.model.embed, tokens, this.model.config.dModel);
  }

  /** The residual stream entering the next layer (the DroidSpeak E cache), `[rows, d_model]`. */
  readHidden(): Float32Array {
    return this.backend.download(this.x, this.numRows * this.model.config.dModel);
  }

  writeHidden(hidden: Float32Array): void {
    if (hidden.length !== this.numRows * this.model.config.dModel)
      throw new Error(`hidden has ${hidden.length} floats, pass needs ${this.numRows * this.model.config.dModel}`);
    this.backend.upload(this.x, hidden);
  }

  /** Copies rows `rowIds` of this pass's residual stream into `into` (another pass over those rows). */
  gatherHiddenInto(into: ForwardPass<T>, rowIds: Int32Array): void {
    if (rowIds.length !== into.numRows) throw new Error('gather: row count mismatch');
    this.backend.embedding(into.x, this.x, rowIds, this.model.config.dModel);
  }

  /**
   * The kernel calls of decoder layer `l`: attention (writing this pass's K/V first when it writes KV) and the SwiGLU MLP, both residual.
   */
  layerCalls(l: number): KernelCall<T>[] {
    const c = this.model.config;
    const w = this.model.layers[l];
    const R = this.numRows;
    const d = c.dModel;
    const qDim = c.heads * c.headDim;
    const kvd = c.kvHeads * c.headDim;
    const { x, h, q, k, v, attn, o, gate, up } = this;
    const calls: KernelCall<T>[] = [];
    const add = (call: KernelCall<T>): void => void calls.push(call);
    if (R === 0) return calls;
    add(kernelCall('rmsnorm', h, x, w.inputNorm, R, d, c.rmsEps));
    // q, k and v back to back: the CPU backend runs consecutive products of one input as a
    // single GEMM call (h packed once, one fork-join), with the same bits.
    add(kernelCall('matmulPacked', q, h, w.wq, R, qDim, d));
    if (this.slots) {
      add(kernelCall('matmulPacked', k, h, w.wk, R, kvd, d));
      add(kernelCall('matmulPacked', v, h, w.wv, R, kvd, d));
    }
    if (w.bias) add(kernelCall('addBias', q, q, w.bias.q, R, qDim));
    if (w.qNorm) add(kernelCall('rmsnorm', q, q, w.qNorm, R * c.heads, c.headDim, c.rmsEps));
    add(kernelCall('rope', q, this.positions, R, c.heads, c.headDim, c.ropeTheta));
    if (this.slots) {
      if (w.bias) {
        add(kernelCall('addBias', k, k, w.bias.k, R, kvd));
        add(kernelCall('addBias', v, v, w.bias.v, R, kvd));
      }
      if (w.kNorm) add(kernelCall('rmsnorm', k, k, w.kNorm, R * c.kvHeads, c.headDim, c.rmsEps));
      add(kernelCall('rope', k, this.positions, R, c.kvHeads, c.headDim, c.ropeTheta));
      add(kernelCall('writeKv', this.cache.tensor, k, v, this.slots, this.cache.planeOf(l), this.cache.geom));
    }
    add(
      kernelCall(
        'pagedAttention',
        attn,
        q,
        this.cache.tensor,
        this.cache.planeOf(l),
        c.heads,
        this.cache.geom,
        this.batch,
        1 / Math.sqrt(c.headDim),
      ),
    );
    add(kernelCall('matmulPacked', o, attn, w.wo, R, d, qDim));
    add(kernelCall('add', x, x, o, R * d));
    add(kernelCall('rmsnorm', h, x, w.postNorm, R, d, c.rmsEps));
    add(kernelCall('matmulPacked', gate, h, w.wGate, R, c.ffn, d));
    add(kernelCall('matmulPacked', up, h, w.wUp, R, c.ffn, d));
    add(kernelCall('siluMul', gate, gate, up, R * c.ffn));
    add(kernelCall('matmulPacked', o, gate, w.wDown, R, d, c.ffn));
    add(kernelCall('add', x, x, o, R * d));
    return calls;
  }

  /** Runs decoder layer `l` (see {@link layerCalls}); resolves when it is done. */
  async runLayer(l: number): Promise<void> {
    if (this.numRows === 0) return;
    await this.backend.submit(this.layerCalls(l));
  }

  /** Final norm and lm head for the listed rows only: `[rowIds.length, vocab]` on the host. */
  async logits(rowIds: Int32Array): Promise<Float32Array> {
    const b = this.backend;
    const c = this.model.config;
    const n = rowIds.length;
    if (n === 0) return new Float32Array(0);
    const sel = b.alloc(n * c.dModel);
    const out = b.alloc(n * c.vocab);
    try {
      await b.submit([
        kernelCall('embedding', sel, this.x, rowIds, c.dModel),
        kernelCall('rmsnorm', sel, sel, this.model.finalNorm, n, c.dModel, c.rmsEps),
        kernelCall('matmulPacked', out, sel, this.model.lmHead, n, c.vocab, c.dModel),
      ]);
      return b.download(out, n * c.vocab);
    } finally {
      b.free(sel);
      b.free(out);
    }
  }

  /** First row of each sequence in the packed batch. */
  rowOffset(seqIndex: number): number {
    return this.batch.queryStart[seqIndex];
  }

  dispose(): void {
    for (const t of this.bufs) this.backend.free(t);
    this.bufs.length = 0;
  }
}
