import { ErrorCode, MnemoError } from '@mnemo/kv-core';
import { kernelCall, type KernelBackend, type KernelCall, type KvGeometry } from '@mnemo/native-cuda';
import { kvDim } from '../../model/model-config.js';
import type { DeviceModel } from '../device-model.js';
import { ForwardPass, type KvPlanes } from '../forward.pass.js';
import type { BackingTier, LayerKvBacking } from './layer-kv.backing.js';

export interface LayerStreamOptions {
  /** N_LSC (Eq. 4): single-layer blocks per plane — the longest context is this many blocks. */
  readonly blocks: number;
  /** Resident layer planes: the active layer plus the prefetch window (≥ 2 so loads overlap compute). */
  readonly window: number;
  /** Where full-layer KV lives, tried in order for each new block (lenders first, then the host). */
  readonly backings: ReadonlyArray<LayerKvBacking<unknown>>;
}

/** Counters of the stream; `stallMs` is time compute waited on a layer that was not resident yet. */
export interface LayerStreamStats {
  passes: number;
  layerLoads: number;
  layerStores: number;
  stallMs: number;
  storeWaitMs: number;
  /** KV elements moved between the planes and the backings (loads and stores). */
  elements: number;
}

interface StreamedSeq {
  length: number;
  /** Per sequence block: which backing holds its full-layer KV, and its block there. */
  readonly blocks: Array<{ readonly backing: number; readonly block: number }>;
}

/**
 * The master's layer stream cache (SwiftCache §3.2–3.3): a device tensor of `window` layer planes
 * `[block][plane][K|V][token][kv_head][head_dim]`, sized for one sequence's blocks, while every
 * layer's KV lives in lenders' regions or the host pool. A pass streams layer l+1 into its plane
 * while layer l computes, and writes the rows it computed for layer l back to their backing once
 * layer l is done, so local memory holds `window` layers of one context instead of all of them.
 *
 * Invariant: sequence block i occupies local block i of every plane (a pass holds one sequence),
 * and the plane `l mod window` is reloaded only after the store of layer `l − window` finished.
 */
export class LayerStreamCache<T> implements KvPlanes<T> {
  readonly tensor: T;
  readonly geom: KvGeometry;
  readonly stats: LayerStreamStats = { passes: 0, layerLoads: 0, layerStores: 0, stallMs: 0, storeWaitMs: 0, elements: 0 };
  private readonly seqs = new Map<string, StreamedSeq>();
  private readonly backings: ReadonlyArray<LayerKvBacking<T>>;
  private readonly rowDim: number;
  private running: string | null = null;

  constructor(
    private readonly backend: KernelBackend<T>,
    private readonly model: DeviceModel<T>,
    private readonly opts: LayerStreamOptions,
  ) {
    const c = model.config;
    if (!Number.isInteger(opts.blocks) || opts.blocks <= 0)
      throw new RangeError(`layer stream cache needs a positive block count, got ${opts.blocks}`);
    if (!Number.isInteger(opts.window) || opts.window < 2 || opts.window > c.layers)
      throw new RangeError(`window must be in [2, ${c.layers}], got ${opts.window}`);
    this.geom = { numLayers: opts.window, numKvHeads: c.kvHeads, headDim: c.headDim, blockSize: 16 };
    this.rowDim = kvDim(c);
    this.tensor = backend.alloc(opts.blocks * opts.window * 2 * this.geom.blockSize * this.rowDim);
    this.backings = opts.backings as ReadonlyArray<LayerKvBacking<T>>;
  }

  /** Longest context the stream can hold (N_LSC · B). */
  get maxTokens(): number {
    return this.opts.blocks * this.geom.blockSize;
  }

  planeOf(layer: number): number {
    return layer % this.opts.window;
  }

  packTables(seqIds: readonly string[]): { blockTables: Int32Array; maxBlocksPerSeq: number } {
    if (seqIds.length !== 1) throw new Error('a layer stream pass holds one sequence');
    const n = Math.max(1, Math.ceil(this.seq(seqIds[0]!).length / this.geom.blockSize));
    return { blockTables: Int32Array.from({ length: n }, (_, i) => i), maxBlocksPerSeq: n };
  }

  /**
   * Registers an empty sequence. `reserveBlocks` takes its backing blocks now, all or nothing
   * (Overloaded, nothing kept): a sequence served on a node must not run out of them mid-decode.
   */
  open(seqId: string, reserveBlocks = 0): void {
    if (this.seqs.has(seqId)) throw new MnemoError(ErrorCode.Conflict, `sequence ${seqId} already exists`);
    if (reserveBlocks > this.opts.blocks)
      throw new MnemoError(
        ErrorCode.Overloaded,
        `layer stream cache holds ${this.opts.blocks} blocks, sequence ${seqId} asks for ${reserveBlocks}`,
      );
    const s: StreamedSeq = { length: 0, blocks: [] };
    this.reserve(s, reserveBlocks);
    this.seqs.set(seqId, s);
  }

  length(seqId: string): number {
    return this.seq(seqId).length;
  }

  /** Blocks of the sequence per tier (tests and metrics). */
  placement(seqId: string): Record<BackingTier, number> {
    const out = { lent: 0, local: 0, host: 0 };
    for (const b of this.seq(seqId).blocks) out[this.backings[b.backing]!.tier]++;
    return out;
  }

  release(seqId: string): void {
    if (this.running === seqId) throw new MnemoError(ErrorCode.Conflict, `sequence ${seqId} is in a pass`);
    for (const b of this.seq(seqId).blocks) this.backings[b.backing]!.release(b.block);
    this.seqs.delete(seqId);
  }

  /**
   * Appends `tokens` and runs them through every layer, streaming each layer's earlier KV in and
   * the new rows' KV out. Returns logits of the last row (`[vocab]`) or of every row. Overloaded,
   * changing nothing, when the context outgrows the stream or every backing is full.
   */
  async step(seqId: string, tokens: readonly number[], logits: 'last' | 'all' = 'last'): Promise<Float32Array> {
    const s = this.seq(seqId);
    if (this.running !== null) throw new MnemoError(ErrorCode.Conflict, 'the layer stream cache runs one pass at a time');
    if (tokens.length === 0) throw new MnemoError(ErrorCode.InvalidRequest, `sequence ${seqId}: no tokens`);
    const c = this.model.config;
    for (const t of tokens)
      if (!Number.isInteger(t) || t < 0 || t >= c.vocab)
        throw new MnemoError(ErrorCode.InvalidRequest, `token id ${t} outside ${c.id}'s vocabulary`);
    const n0 = s.length;
    const n1 = n0 + tokens.length;
    if (n1 > this.maxTokens)
      throw new MnemoError(ErrorCode.Overloaded, `layer stream cache holds ${this.maxTokens} tokens, sequence ${seqId} needs ${n1}`);
    this.reserve(s, Math.ceil(n1 / this.geom.blockSize));
    s.length = n1;
    this.running = seqId;
    const rows = tokens.length;
    const newSlots = Int32Array.from({ length: rows }, (_, i) => n0 + i);
    const pass = new ForwardPass(this.backend, this.model, this, [{ seqId, rows, contextLen: n1, slots: newSlots }]);
    try {
      const load = (l: number) => (n0 === 0 ? undefined : this.load(s, l, n0));
      let next = load(0);
      pass.embed(Int32Array.from(tokens));
      for (let l = 0; l < c.layers; l++) {
        await this.waitStall(next);
        const computing = pass.runLayer(l);
        // Layer l+1's plane was last used by layer l+1-window, whose store finished below.
        next = l + 1 < c.layers ? load(l + 1) : undefined;
        next?.catch(() => undefined);
        await computing;
        const t0 = performance.now();
        await this.store(s, l, n0, rows);
        this.stats.storeWaitMs += performance.now() - t0;
      }
      const rowIds = logits === 'last' ? Int32Array.of(rows - 1) : Int32Array.from({ length: rows }, (_, i) => i);
      return await pass.logits(rowIds);
    } catch (e) {
      s.length = n0;
      throw e;
    } finally {
      pass.dispose();
      this.running = null;
      this.stats.passes++;
    }
  }

  free(): void {
    for (const id of [...this.seqs.keys()]) this.release(id);
    this.backend.free(this.tensor);
  }

  private async waitStall(p: Promise<void> | undefined): Promise<void> {
    if (!p) return;
    const t0 = performance.now();
    await p;
    this.stats.stallMs += performance.now() - t0;
  }

  /** Backing blocks for the sequence's first `blocks` blocks; all or nothing. */
  private reserve(s: StreamedSeq, blocks: number): void {
    const added: Array<{ backing: number; block: number }> = [];
    while (s.blocks.length + added.length < blocks) {
      let got: { backing: number; block: number } | null = null;
      for (let i = 0; i < this.backings.length && !got; i++) {
        const block = this.backings[i]!.allocate();
        if (block !== null) got = { backing: i, block };
      }
      if (!got) {
        for (const a of added) this.backings[a.backing]!.release(a.block);
        throw new MnemoError(ErrorCode.Overloaded, `no lender or host block left for the layer stream cache`);
      }
      added.push(got);
    }
    s.blocks.push(...added);
  }

  /**
   * Brings layer l of tokens [0, n) from their backings into the layer's plane: one kernel list
   * for all backings, each group through its own staging rows (a host group's upload happens
   * while the list is built, so groups must not share them).
   */
  private async load(s: StreamedSeq, l: number, n: number): Promise<void> {
    const calls: Array<KernelCall<T>> = [];
    const staging: T[] = [];
    try {
      for (const [i, group] of this.byBacking(s, 0, n)) {
        const k = this.backend.alloc(group.local.length * this.rowDim);
        const v = this.backend.alloc(group.local.length * this.rowDim);
        staging.push(k, v);
        calls.push(...this.backings[i]!.readCalls(l, group.remote, k, v));
        calls.push(kernelCall('writeKv', this.tensor, k, v, group.local, this.planeOf(l), this.geom));
      }
      await this.backend.submit(calls);
    } finally {
      for (const t of staging) this.backend.free(t);
    }
    this.stats.layerLoads++;
    this.stats.elements += 2 * n * this.rowDim;
  }

  /** Sends the rows [n0, n0+rows) that layer l just wrote back to their backings, one kernel list. */
  private async store(s: StreamedSeq, l: number, n0: number, rows: number): Promise<void> {
    const B = this.geom.blockSize;
    const plane = this.planeOf(l);
    const calls: Array<KernelCall<T>> = [];
    const finish: Array<() => void> = [];
    const staging: T[] = [];
    try {
      for (const [i, group] of this.byBacking(s, n0, n0 + rows)) {
        const k = this.backend.alloc(group.local.length * this.rowDim);
        const v = this.backend.alloc(group.local.length * this.rowDim);
        staging.push(k, v);
        const ks = group.local.map((t) => (Math.floor(t / B) * this.opts.window + plane) * 2 * B + (t % B));
        const vs = group.local.map((t) => ((Math.floor(t / B) * this.opts.window + plane) * 2 + 1) * B + (t % B));
        calls.push(kernelCall('embedding', k, this.tensor, ks, this.rowDim), kernelCall('embedding', v, this.tensor, vs, this.rowDim));
        const w = this.backings[i]!.writeCalls(l, group.remote, k, v);
        calls.push(...w.calls);
        if (w.finish) finish.push(w.finish);
      }
      await this.backend.submit(calls);
      for (const f of finish) f();
    } finally {
      for (const t of staging) this.backend.free(t);
    }
    this.stats.layerStores++;
    this.stats.elements += 2 * rows * this.rowDim;
  }

  /** Tokens [from, to) grouped by backing: local slots (= token positions) and backing slots. */
  private byBacking(s: StreamedSeq, from: number, to: number): Map<number, { local: Int32Array; remote: Int32Array }> {
    const B = this.geom.blockSize;
    const lists = new Map<number, { local: number[]; remote: number[] }>();
    for (let t = from; t < to; t++) {
      const b = s.blocks[Math.floor(t / B)]!;
      let g = lists.get(b.backing);
      if (!g) lists.set(b.backing, (g = { local: [], remote: [] }));
      g.local.push(t);
      g.remote.push(b.block * B + (t % B));
    }
    const out = new Map<number, { local: Int32Array; remote: Int32Array }>();
    for (const [i, g] of lists) out.set(i, { local: Int32Array.from(g.local), remote: Int32Array.from(g.remote) });
    return out;
  }

  private seq(seqId: string): StreamedSeq {
    const s = this.seqs.get(seqId);
    if (!s) throw new MnemoError(ErrorCode.NotFound, `unknown sequence ${seqId}`);
    return s;
  }
}
