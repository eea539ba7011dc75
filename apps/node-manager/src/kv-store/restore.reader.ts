import { CHUNK_TOKENS, ErrorCode, layerPieces, MnemoError, planOffload, type PinHandle, type PrefixChunk, type SegmentLocation } from '@mnemo/kv-core';
import { allocHostBuffer, freeHostBuffer, transfer, type TransferOperand } from '@mnemo/native-cuda';
import type { ModelKv } from './model.kv.js';
import type { OffloadTiers } from './offload.tiers.js';

export interface RestoreOptions {
  /**
   * Start copying layer l + 1 when layer l is loaded (default true). Off only for same-process
   * A/B measurements: the copy then starts when the engine asks for the layer.
   */
  readonly copyAhead?: boolean;
  /** SSD bytes read ahead of the layer loaded (default READ_AHEAD_BYTES); for A/B measurements. */
  readonly readAheadBytes?: number;
}

/** Where one (chunk, layer) segment is read from during a restore. */
interface Source {
  readonly key: string;
  readonly layer: number;
  /** The replica pinned for the whole restore (host if the host held it, else SSD). */
  readonly pinned: PinHandle;
  /** Host copy to read from: the pinned one, or the promotion target of an SSD one. */
  host?: { readonly operand: TransferOperand; readonly offset: number; readonly crc32c: number };
  /** Set when `host` was filled (and its CRC checked) by this restore: no second check needed. */
  verified?: boolean;
  /** The scratch buffer `host` lies in, handed back once the layer is copied out. */
  scratch?: ArrayBuffer;
}

/**
 * SSD reads kept in flight ahead of the layer being loaded: a layer-wise restore of a few
 * chunks reads only a few MiB per layer, far too little to keep an SSD's queue busy on its own.
 * Layers are read in windows of half this size, one transfer each, the next window in flight
 * while the current one is used (each transfer fills the device queue with many requests).
 */
const READ_AHEAD_BYTES = 32 * 1024 * 1024;

/**
 * Layer payloads are handed out from this many reused buffers: a fresh multi-MiB array per
 * layer costs page faults and zeroing on every byte before a single byte of KV is copied.
 * Three: the layer handed out last (valid until the load two layers later, as KvRestorePlan
 * allows), the one being loaded, and the next one, copied ahead.
 */
const OUTPUT_SLOTS = 3;

/**
 * Reads one request's cached prefix back from the offload tiers, a layer at a time, in the
 * layout a layer-wise load hands the engine: `[K|V][until - from][kv_head · head_dim]`.
 *
 * Every replica it will read is pinned when the restore is planned (nothing can evict or free
 * it until {@link release}), host replicas first. An SSD-only segment is first read into the
 * host pool (a promotion: the next turn finds it there), or into a scratch buffer when the host
 * pool has no room. Every segment's CRC32C is checked against the one recorded when it was
 * written — on the bytes actually copied — and a mismatch throws DataLoss after dropping the
 * replica, so the prefill fails, the request recomputes, and no wrong KV is ever used.
 * Each load also starts copying the next layer, so consecutive loads find their copy running.
 */
export class RestoreReader {
  private readonly sources: Source[][];
  private readonly promoted: PinHandle[] = [];
  /** Host slots read into that another restore promoted first: freed when this one ends. */
  private readonly orphans: SegmentLocation[] = [];
  /** Promotions started, by read-ahead window: awaited by the loads of that window's layers. */
  private readonly promotions = new Map<number, Promise<void>>();
  /** Scratch buffers no layer uses any more, reused by the next promotion that needs one. */
  private readonly spare: ArrayBuffer[] = [];
  /** Sources still reading from each scratch buffer: it is spare once that reaches 0. */
  private readonly scratchUsers = new Map<ArrayBuffer, number>();
  private readonly scratch = new Set<ArrayBuffer>();
  /** Reused layer payloads, by `layer % OUTPUT_SLOTS`. */
  private readonly outputs: Float32Array[] = [];
  /** Copy-outs in flight: scratch memory is freed only after they finish. */
  private readonly copies = new Set<Promise<unknown>>();
  /** The layer after the last one loaded, copied ahead (the engine loads layers in order). */
  private ahead?: { readonly layer: number; readonly copy: Promise<Float32Array> };
  private released = false;

  /** Throws DataLoss if some replica is no longer there (evicted since the lookup). */
  constructor(
    private readonly tiers: OffloadTiers,
    private readonly m: ModelKv,
    /** The chunks covering [from, until), in order. */
    private readonly chunks: readonly PrefixChunk[],
    readonly from: number,
    readonly until: number,
    private readonly options: RestoreOptions = {},
  ) {
    this.sources = [];
    try {
      for (const c of chunks) {
        const layers: Source[] = [];
        for (let layer = 0; layer < m.geometry.layers; layer++) {
          const tier = c.mem[layer] ? 'mem' : 'ssd';
          const pinned = m.table.pin(c.chunkKey, layer, tier);
          if (!pinned) throw new MnemoError(ErrorCode.DataLoss, `chunk ${c.chunkKey} layer ${layer} left the ${tier} tier before its restore`);
          const host = tier === 'mem' ? { operand: tiers.device(pinned.location.deviceIndex).device, offset: pinned.location.offset, crc32c: pinned.location.crc32c } : undefined;
          layers.push({ key: c.chunkKey, layer, pinned, host });
        }
        this.sources.push(layers);
      }
    } catch (e) {
      this.release();
      throw e;
    }
  }

  /** Layer `layer` of the restored positions, verified. */
  async load(layer: number): Promise<Float32Array> {
    if (this.released) throw new MnemoError(ErrorCode.Internal, 'restore reader used after release');
    let ahead = this.ahead;
    this.ahead = undefined;
    if (ahead && ahead.layer !== layer) {
      // Loads out of order: the copy made ahead may still be writing into the slot this load
      // needs, so it must land first (its result, and any error, belong to nobody).
      await ahead.copy.catch(() => undefined);
      ahead = undefined;
    }
    const copy = ahead?.copy ?? this.copyLayer(layer);
    // The next layer's copy queues behind this one, so the copy threads never wait on a
    // round trip through JS between layers; its slot held layer - 2, whose use has ended.
    // NOTE: only when all of it is in host memory already: a copy ahead that has to wait for
    // SSD reads would start the next read window early, and windows read side by side finish
    // together, later than one after the other (SSD gets were 2–38% slower in six same-process A/Bs).
    const next = layer + 1;
    if (this.options.copyAhead !== false && next < this.m.geometry.layers && this.sources.every((s) => s[next]!.host)) {
      const copyNext = this.copyLayer(next);
      // A copy made ahead that is never loaded (released early) must not surface as an unhandled rejection.
      copyNext.catch(() => undefined);
      this.ahead = { layer: next, copy: copyNext };
    }
    return copy;
  }

  /** Copies layer `layer` into its output slot, checking the CRC of every replica read unverified. */
  private async copyLayer(layer: number): Promise<Float32Array> {
    const first = Math.floor(this.from / CHUNK_TOKENS);
    const window = this.windowLayers();
    const w = Math.floor(layer / window);
    this.startPromotion(w);
    this.startPromotion(w + 1);
    await this.promotions.get(w);
    // Released meanwhile (a copy made ahead outlives its prefill): nothing may be pinned or read now.
    if (this.released) throw new MnemoError(ErrorCode.Internal, 'restore reader released during a load');
    // A layer loaded a second time after its scratch copy was handed back: read it again.
    if (this.sources.some((s) => !s[layer]!.host)) {
      this.promotions.delete(w);
      this.startPromotion(w, layer);
      await this.promotions.get(w);
    }
    if (this.released) throw new MnemoError(ErrorCode.Internal, 'restore reader released during a load');
    const srcs = this.sources.map((s) => s[layer]!);
    const g = this.m.geometry;
    const dst = this.output(layer, 2 * (this.until - this.from) * g.rowElems);
    const operands: TransferOperand[] = [dst];
    const index = new Map<TransferOperand, number>([[dst, 0]]);
    const op = (o: TransferOperand) => {
      if (!index.has(o)) index.set(o, operands.push(o) - 1);
      return index.get(o)!;
    };
    const ranges: number[] = [];
    const segElems = this.m.segBytes / 4;
    for (const p of layerPieces(g, layer, this.from, this.until)) {
      const h = srcs[p.chunk - first]!.host!;
      ranges.push(op(h.operand), h.offset + (p.src - layer * segElems) * 4, 0, p.dst * 4, p.len * 4);
    }
    // Replicas this restore read in were verified on the way in; the others are checked now.
    const unverified = srcs.filter((s) => !s.verified);
    const crcs = unverified.flatMap((s) => [op(s.host!.operand), s.host!.offset, this.m.segBytes]);
    const copy = transfer(operands, Float64Array.from(ranges), crcs.length ? { crcs: Float64Array.from(crcs) } : undefined);
    this.copies.add(copy);
    const r = await copy.finally(() => this.copies.delete(copy));
    unverified.forEach((s, i) => {
      if (r.crcs[i] !== s.host!.crc32c) this.corrupt(s, s.pinned.location.type);
    });
    for (const s of srcs) this.dropScratch(s);
    this.tiers.counters.readBytes.mem += srcs.length * this.m.segBytes;
    return dst;
  }

  /** Layers per read-ahead window: half the read-ahead budget's worth of this restore's segments. */
  private windowLayers(): number {
    const bytes = this.options.readAheadBytes ?? READ_AHEAD_BYTES;
    return Math.max(1, Math.floor(bytes / 2 / Math.max(1, this.sources.length * this.m.stride)));
  }

  /** Starts reading window `w`'s SSD-only segments (from layer `from` on) into host memory, once. */
  private startPromotion(w: number, from = 0): void {
    const window = this.windowLayers();
    const start = Math.max(from, w * window);
    const end = Math.min(this.m.geometry.layers, (w + 1) * window);
    if (this.promotions.has(w) || start >= end) return;
    const srcs = this.sources.flatMap((s) => s.slice(start, end));
    for (const s of srcs) {
      if (s.host) continue;
      // Promoted by another restore since this one was planned: read that copy instead.
      const pin = this.m.table.pin(s.key, s.layer, 'mem');
      if (!pin) continue;
      this.promoted.push(pin);
      s.host = { operand: this.tiers.device(pin.location.deviceIndex).device, offset: pin.location.offset, crc32c: pin.location.crc32c };
    }
    const todo = srcs.filter((s) => !s.host).sort((a, b) => a.layer - b.layer);
    if (todo.length === 0) return;
    const p = this.promote(todo);
    // A read-ahead whose layers are never loaded (the reader released early) must not surface as an unhandled rejection.
    p.catch(() => {});
    this.promotions.set(w, p);
  }

  private output(layer: number, floats: number): Float32Array {
    const slot = layer % OUTPUT_SLOTS;
    let out = this.outputs[slot];
    if (!out) {
      const buf = allocHostBuffer(floats * 4);
      this.scratch.add(buf);
      out = this.outputs[slot] = new Float32Array(buf, 0, floats);
    }
    return out;
  }

  private takeScratch(bytes: number): ArrayBuffer {
    const i = this.spare.findIndex((b) => b.byteLength >= bytes);
    if (i >= 0) return this.spare.splice(i, 1)[0]!;
    const b = allocHostBuffer(bytes);
    this.scratch.add(b);
    return b;
  }

  /** A scratch copy is only good until its layer is copied out: the buffer goes back to the spares. */
  private dropScratch(s: Source): void {
    if (!s.scratch) return;
    const users = (this.scratchUsers.get(s.scratch) ?? 1) - 1;
    if (users > 0) this.scratchUsers.set(s.scratch, users);
    else {
      this.scratchUsers.delete(s.scratch);
      this.spare.push(s.scratch);
    }
    s.scratch = undefined;
    s.host = undefined;
    s.verified = false;
  }

  /** Restored tokens per tier they come from: host when every layer of their chunk was in host memory. */
  tokensByTier(): { mem: number; ssd: number } {
    const out = { mem: 0, ssd: 0 };
    this.chunks.forEach((c, i) => {
      const start = Math.max(this.from, c.position * CHUNK_TOKENS);
      const end = Math.min(this.until, (c.position + 1) * CHUNK_TOKENS);
      out[this.sources[i]!.every((s) => s.pinned.location.type === 'mem') ? 'mem' : 'ssd'] += Math.max(0, end - start);
    });
    return out;
  }

  /** Lets go of every pin (space freed meanwhile comes back now). Idempotent. */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.tiers.unpin(this.m, [...this.sources.flat().map((s) => s.pinned), ...this.promoted]);
    for (const loc of this.orphans) this.tiers.free(loc);
    // Read-aheads and copy-outs still in flight hold their scratch until they settle.
    const outstanding = [...this.promotions.values(), ...this.copies];
    const freeScratch = () => {
      for (const b of this.scratch) freeHostBuffer(b);
      this.scratch.clear();
      this.spare.length = 0;
    };
    if (outstanding.length === 0) freeScratch();
    else void Promise.allSettled(outstanding).then(freeScratch);
  }

  /** Reads SSD-only segments into host memory in one transfer, verifying each on the way. */
  private async promote(srcs: Source[]): Promise<void> {
    if (srcs.length === 0) return;
    const m = this.m;
    const plan = this.tiers.host.length === 0 ? undefined : planOffload(
      srcs.map((s) => ({ position: 0, s })),
      this.tiers.host.map((d) => ({ deviceIndex: d.index, type: d.type, bandwidth: d.bandwidth, allocator: d.allocator })),
      m.stride,
    );
    const targets = new Map<Source, { operand: TransferOperand; offset: number; deviceIndex?: number }>();
    for (const w of plan?.writes ?? []) w.segments.forEach(({ s }, i) => targets.set(s, { operand: this.tiers.device(w.deviceIndex).device, offset: w.offsets[i]!, deviceIndex: w.deviceIndex }));
    const rest = srcs.filter((s) => !targets.has(s));
    let scratch: ArrayBuffer | undefined;
    if (rest.length > 0) {
      // No host room: a scratch buffer, aligned for O_DIRECT, only until this layer is loaded.
      scratch = this.takeScratch(rest.length * m.stride);
      rest.forEach((s, i) => targets.set(s, { operand: scratch!, offset: i * m.stride }));
    }
    const freePlan = () => {
      for (const w of plan?.writes ?? []) for (const x of w.extents) this.tiers.device(w.deviceIndex).allocator.free(x.offset, x.length);
      if (scratch) this.spare.push(scratch);
    };
    const operands: TransferOperand[] = [];
    const index = new Map<TransferOperand, number>();
    const op = (o: TransferOperand) => {
      if (!index.has(o)) index.set(o, operands.push(o) - 1);
      return index.get(o)!;
    };
    const ioBytes = m.segBytes % 4096 === 0 ? m.segBytes : m.stride;
    const ranges: number[] = [];
    const crcs: number[] = [];
    for (const s of srcs) {
      const t = targets.get(s)!;
      ranges.push(op(this.tiers.device(s.pinned.location.deviceIndex).device), s.pinned.location.offset, op(t.operand), t.offset, ioBytes);
      crcs.push(op(t.operand), t.offset, m.segBytes);
    }
    let r;
    try {
      r = await transfer(operands, Float64Array.from(ranges), { crcs: Float64Array.from(crcs) });
    } catch (e) {
      freePlan();
      throw new MnemoError(ErrorCode.DataLoss, `SSD read failed: ${(e as Error).message}`);
    }
    this.tiers.counters.readBytes.ssd += srcs.length * m.segBytes;
    if (this.released) {
      // Released while the read was in flight: its pins are gone, so nothing read may be kept.
      freePlan();
      return;
    }
    const bad = srcs.find((s, i) => r.crcs[i] !== s.pinned.location.crc32c);
    if (bad) {
      freePlan();
      this.corrupt(bad, 'ssd');
    }
    const kept: Array<{ seg: { chunkKey: string; position: number; layer: number }; location: SegmentLocation }> = [];
    srcs.forEach((s) => {
      const t = targets.get(s)!;
      s.host = { operand: t.operand, offset: t.offset, crc32c: s.pinned.location.crc32c };
      s.verified = true;
      if (t.deviceIndex === undefined) {
        s.scratch = scratch;
        this.scratchUsers.set(scratch!, (this.scratchUsers.get(scratch!) ?? 0) + 1);
        return;
      }
      const location: SegmentLocation = { deviceIndex: t.deviceIndex, type: 'mem', offset: t.offset, length: m.segBytes, crc32c: s.pinned.location.crc32c };
      if (m.table.get(s.key, s.layer, 'mem')) this.orphans.push(location);
      else kept.push({ seg: { chunkKey: s.key, position: m.table.positionOf(s.key)!, layer: s.layer }, location });
    });
    // Promoted copies join the host tier (pinned until this restore ends).
    this.tiers.put(m, kept);
    for (const k of kept) {
      const pin = m.table.pin(k.seg.chunkKey, k.seg.layer, 'mem');
      if (pin) this.promoted.push(pin);
    }
  }

  private corrupt(s: Source, tier: 'mem' | 'ssd'): never {
    this.tiers.dropCorrupt(this.m, s.key, s.layer, tier);
    throw new MnemoError(ErrorCode.DataLoss, `chunk ${s.key} layer ${s.layer}: CRC32C mismatch in the ${tier} tier (dropped; the request recomputes)`);
  }
}
