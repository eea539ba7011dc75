import {
  BufferPool,
  CHUNK_TOKENS,
  ErrorCode,
  layerPieces,
  MnemoError,
  pushRowRanges,
  restoredTokensByTier,
  RestoreReadSchedule,
  RestoreBuffers,
  type PrefixChunk,
  type RestoreReadOptions,
} from '@mnemo/kv-core';
import { transfer, transferOperands } from '@mnemo/native-cuda';
import type { KvRestoreTarget } from '@mnemo/engine';
import { HOST_MEMORY, type ModelKv, type OffloadTiers } from './offload.tiers.js';
import { HostPromotions, type RestoreSource as Source } from './host.promotions.js';

export interface RestoreOptions extends RestoreReadOptions {
  /** Take layer payloads and scratch from the tiers' buffer pool (default true); off for A/B measurements. */
  readonly reuseBuffers?: boolean;
  /**
   * Where {@link RestoreReader.loadInto} copies (default `compute`): on the engine's compute
   * queue, across its kernel lanes, between the layer before and the layer that needs the rows;
   * or on the copy threads beside the compute (`copy`, the earlier design, for A/B measurements).
   */
  readonly intoLane?: 'copy' | 'compute';
}

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
  /** SSD-only segments read into the host pool for this restore (pinned until it ends). */
  private readonly promoted: HostPromotions;
  /** Promotions started, by read group (a layer, or a window of them): awaited by the loads of its layers. */
  private readonly promotions = new Map<number, Promise<void>>();
  /** Payload slots and scratch, given back to the pool when the restore ends. */
  private readonly buffers: RestoreBuffers;
  /**
   * Reused layer payloads, by `layer % slots` (a fresh multi-MiB array per layer costs page
   * faults and zeroing): the layer handed out last (valid until the load two layers later, as
   * KvRestorePlan allows), the one being loaded, and those copied ahead.
   */
  private readonly outputs: Float32Array[] = [];
  /** Copy-outs in flight: scratch memory is freed only after they finish. */
  private readonly copies = new Set<Promise<unknown>>();
  /** Layers after the last one loaded, copied ahead (the engine loads layers in order). */
  private readonly ahead = new Map<number, Promise<Float32Array>>();
  /** Read groups, read-ahead and copy-ahead (kv-core), fixed for the restore. */
  private readonly schedule: RestoreReadSchedule;
  private released = false;
  private idle: Promise<void> = Promise.resolve();

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
    this.buffers = new RestoreBuffers(options.reuseBuffers === false ? new BufferPool(HOST_MEMORY, 0) : tiers.buffers);
    this.schedule = new RestoreReadSchedule(m.geometry.layers, chunks.length * m.stride, options);
    this.promoted = new HostPromotions(
      tiers,
      m,
      this.buffers,
      options.ssdReads === 'windows' && !tiers.faultSkipRestoreCrc,
      () => this.released,
      (s, tier) => this.corrupt(s, tier),
    );
    this.sources = tiers.pinRestore(m, chunks).map((pins, i) =>
      pins.map((pinned, layer) => {
        const { type, deviceIndex, offset, crc32c } = pinned.location;
        const host = type === 'mem' ? { operand: tiers.device(deviceIndex).device, offset, crc32c } : undefined;
        return { key: chunks[i]!.chunkKey, layer, pinned, host };
      }),
    );
  }

  /**
   * Starts the reads the first loads will need, as a load of layer 0 would, so they can land
   * while the request still waits for its pass. Nothing is copied out.
   */
  prefetch(): void {
    if (this.released) return;
    this.startAhead(0);
  }

  /** Layer `layer` of the restored positions, verified. */
  async load(layer: number): Promise<Float32Array> {
    if (this.released) throw new MnemoError(ErrorCode.Internal, 'restore reader used after release');
    // Reads start here, where the engine's progress is known, never from a copy made ahead:
    // the ring stays the read-ahead budget deep from the layer the engine is at.
    const first = this.schedule.groupOf(layer);
    this.startAhead(first);
    let copy = this.ahead.get(layer);
    this.ahead.delete(layer);
    // Loads out of order: copies made ahead for other layers land first (kv-core says which).
    const stale = this.schedule.staleCopies(this.ahead.keys(), layer);
    if (stale.length > 0) {
      await Promise.allSettled(stale.map((l) => this.ahead.get(l)));
      for (const l of stale) this.ahead.delete(l);
    }
    copy ??= this.copyLayer(layer);
    // The next layers' copies queue behind this one (which ones: kv-core's schedule).
    const inHost = (l: number) => this.sources.every((s) => s[l]!.host);
    for (const next of this.schedule.copiesAfter(layer, (l) => this.ahead.has(l), inHost)) {
      const copyNext = this.copyLayer(next);
      // A copy made ahead that is never loaded (released early) must not surface as an unhandled rejection.
      copyNext.catch(() => undefined);
      this.ahead.set(next, copyNext);
    }
    return copy;
  }

  /**
   * Layer `layer` of the restored positions copied, verified, straight into the engine's KV
   * memory (`target`: where each position's K and V rows go). One copy fewer than {@link load},
   * and it runs on the engine's kernel lanes (see `intoLane`), not the caller's thread. Nothing is copied ahead: the target of a
   * layer is the engine's to give, when it asks. Rows written before a CRC mismatch is found
   * belong to a pass that then fails; the engine never names them.
   */
  async loadInto(layer: number, target: KvRestoreTarget): Promise<void> {
    if (this.released) throw new MnemoError(ErrorCode.Internal, 'restore reader used after release');
    const n = this.until - this.from;
    if (target.kOffsets.length !== n || target.vOffsets.length !== n || target.rowBytes !== this.m.geometry.rowElems * 4) {
      throw new MnemoError(
        ErrorCode.InvalidRequest,
        `restore target for ${target.kOffsets.length} positions of ${target.rowBytes} ` +
          `B, the restore has ${n} of ${this.m.geometry.rowElems * 4} B`,
      );
    }
    this.startAhead(this.schedule.groupOf(layer));
    await this.copyLayer(layer, target);
  }

  /** Copies layer `layer` into its output slot (or `target`), checking the CRC of every replica read unverified. */
  private async copyLayer(layer: number): Promise<Float32Array>;
  private async copyLayer(layer: number, target: KvRestoreTarget): Promise<undefined>;
  private async copyLayer(layer: number, target?: KvRestoreTarget): Promise<Float32Array | undefined> {
    const first = Math.floor(this.from / CHUNK_TOKENS);
    const w = this.schedule.groupOf(layer);
    this.startPromotion(w);
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
    const dst = target ? undefined : this.output(layer, 2 * (this.until - this.from) * g.rowElems);
    const { operands, op } = target ? transferOperands(target.buffer) : transferOperands(dst!);
    const ranges: number[] = [];
    const segElems = this.m.segBytes / 4;
    for (const p of layerPieces(g, layer, this.from, this.until)) {
      const h = srcs[p.chunk - first]!.host!;
      const src = h.offset + (p.src - layer * segElems) * 4;
      if (target) pushRowRanges(ranges, op(h.operand), src, p.dst, p.len, this.until - this.from, g.rowElems, target);
      else ranges.push(op(h.operand), src, 0, p.dst * 4, p.len * 4);
    }
    // Replicas this restore read in were verified on the way in; the others are checked now
    // (none with the fault-injection switch that lets corrupted KV through for a control test).
    const unverified = this.tiers.faultSkipRestoreCrc ? [] : srcs.filter((s) => !s.verified);
    const crcs = unverified.flatMap((s) => [op(s.host!.operand), s.host!.offset, this.m.segBytes]);
    // Into the engine's cache: on its compute lanes, where the rows are used next (see intoLane).
    const lane = target ? (this.options.intoLane ?? 'compute') : 'copy';
    const copy = transfer(operands, Float64Array.from(ranges), { ...(crcs.length ? { crcs: Float64Array.from(crcs) } : {}), lane });
    this.copies.add(copy);
    const r = await copy.finally(() => this.copies.delete(copy));
    // Released while copying: pins are gone and pending promotions may be reused already, so a
    // mismatch now proves nothing about the stored replica.
    if (this.released) throw new MnemoError(ErrorCode.Internal, 'restore reader released during a load');
    unverified.forEach((s, i) => {
      if (r.crcs[i] !== s.host!.crc32c) this.corrupt(s, s.pinned.location.type);
    });
    this.promoted.keep(srcs);
    for (const s of srcs) this.dropScratch(s);
    this.tiers.counters.readBytes.mem += srcs.length * this.m.segBytes;
    return dst;
  }

  /** Starts the read groups from `first` on, the read-ahead budget's worth (slowly at first: kv-core's schedule). */
  private startAhead(first: number): void {
    const start = (g: number) => {
      this.startPromotion(g);
      return this.promotions.get(g);
    };
    this.schedule.startReads(first, start, () => this.released);
  }

  /** Starts reading group `w`'s SSD-only segments (from layer `from` on) into host memory, once. */
  private startPromotion(w: number, from = 0): void {
    const { start, end } = this.schedule.groupRange(w, from);
    if (this.promotions.has(w) || start >= end) return;
    const srcs = this.sources.flatMap((s) => s.slice(start, end));
    for (const s of srcs) {
      // Promoted by another restore since this one was planned: read that copy instead.
      const at = s.host ? undefined : this.promoted.pinHostCopy(s)?.location;
      if (at) s.host = { operand: this.tiers.device(at.deviceIndex).device, offset: at.offset, crc32c: at.crc32c };
    }
    const todo = srcs.filter((s) => !s.host).sort((a, b) => a.layer - b.layer);
    if (todo.length === 0) return;
    const p = this.promoted.read(todo);
    // A read-ahead whose layers are never loaded (the reader released early) must not surface as an unhandled rejection.
    p.catch(() => {});
    this.promotions.set(w, p);
  }

  private output(layer: number, floats: number): Float32Array {
    const slot = layer % this.schedule.slots;
    let out = this.outputs[slot];
    if (!out) {
      out = this.outputs[slot] = new Float32Array(this.buffers.take(floats * 4), 0, floats);
    }
    return out;
  }

  /** A scratch copy is only good until its layer is copied out: the buffer goes back to the spares. */
  private dropScratch(s: Source): void {
    if (!s.scratch) return;
    this.buffers.done(s.scratch);
    s.scratch = undefined;
    s.host = undefined;
    s.verified = false;
  }

  /** Restored tokens per tier they come from: host when every layer of their chunk was in host memory. */
  tokensByTier(): { mem: number; ssd: number } {
    return restoredTokensByTier(this.chunks, this.from, this.until, (i) => this.sources[i]!.every((s) => s.pinned.location.type === 'mem'));
  }

  /** Lets go of every pin (space freed meanwhile comes back now). Idempotent. */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.tiers.unpin(this.m, [...this.sources.flat().map((s) => s.pinned), ...this.promoted.pins]);
    for (const loc of this.promoted.orphans) this.tiers.free(loc);
    // Read-aheads and copy-outs still in flight hold their buffers until they settle.
    const outstanding = [...this.promotions.values(), ...this.copies];
    const freeScratch = () => {
      for (const s of this.sources.flat()) {
        if (s.pending) this.tiers.free(s.pending);
        s.pending = undefined;
      }
      this.buffers.giveBack();
    };
    if (outstanding.length === 0) freeScratch();
    else this.idle = Promise.allSettled(outstanding).then(freeScratch);
  }

  /** After release: settles once every read and copy it started has ended and its memory went back. */
  whenIdle(): Promise<void> {
    return this.idle;
  }

  private corrupt(s: Source, tier: 'mem' | 'ssd'): never {
    return this.tiers.failCorrupt(this.m, s.key, s.layer, tier);
  }
}
