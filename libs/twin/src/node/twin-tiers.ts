import {
  ExtentAllocator,
  LookupTable,
  planOffload,
  POOL_ALIGNMENT,
  PrefetchedChunks,
  SSD_BATCH_SEGMENTS,
  type DeviceWrite,
  type OffloadDevice,
  type PinHandle,
  type PoolTier,
  type PrefetchAdvisory,
  type Removal,
  type SegmentRef,
  type Withdrawal,
} from '@mnemo/kv-core';
import type { EventQueue } from '../core/event.queue.js';
import { transferMs, type TransferLink } from '../costs/transfer.port.js';

/** A pool device: its capacity and the bandwidth placement weighs it by (any unit, the same for all). */
export interface TwinPoolDevice {
  readonly bytes: number;
  readonly bandwidth: number;
}

/** The tiers as a node is configured with them: its config carries these as they are (none: the store is off). */
export interface TwinTierConfig {
  readonly layers: number;
  readonly host: readonly TwinPoolDevice[];
  readonly ssd: readonly TwinPoolDevice[];
  /** SSD replicas idle longer than this expire. */
  readonly ssdTtlMs: number;
}

export interface TwinTiersOptions extends TwinTierConfig {
  /** Bytes of one segment (one layer of one 256-token chunk). */
  readonly segBytes: number;
  /** Copies into the host pool (an export's write, a promotion's landing). */
  readonly hostWrite: TransferLink;
  /** Writes into the SSD pool. */
  readonly ssdWrite: TransferLink;
}

/** A change to what a tier holds (the node reports it in its KV events). */
export type TierChange = { readonly kind: 'stored' | 'removed' | 'truncated'; readonly tier: PoolTier; readonly keys: readonly string[] };

interface SsdJob {
  readonly seg: SegmentRef;
  readonly pin?: PinHandle;
  readonly origin: number;
}

/**
 * A twin node's offload tiers, with the live node's policies: kv-core's lookup table (LRU
 * request, later layers first), extent allocators and bandwidth-proportional placement, the
 * write-through of whole chunks (host at once, SSD behind it, a full tier evicting once, what
 * no tier has room for not kept), prefetched chunks purged first from host memory, and SSD
 * expiry. Writes land after their modelled transfer time; the SSD writes queue one batch at a
 * time, as the writer's pump does.
 */
export class TwinTiers {
  readonly table: LookupTable;
  readonly prefetched = new PrefetchedChunks();
  readonly stride: number;
  readonly counters = { writtenBytes: { mem: 0, ssd: 0 }, evictedSegments: { mem: 0, ssd: 0 }, ssdSkipped: 0 };
  private readonly host: OffloadDevice[];
  private readonly ssd: OffloadDevice[];
  private readonly queue: SsdJob[] = [];
  private pumping = false;
  private origins = 0;

  constructor(
    readonly o: TwinTiersOptions,
    private readonly events: EventQueue,
    private readonly onChange: (c: TierChange) => void,
  ) {
    this.table = new LookupTable({ numLayers: o.layers, ttlMs: o.ssdTtlMs });
    this.stride = Math.ceil(o.segBytes / POOL_ALIGNMENT) * POOL_ALIGNMENT;
    let index = 0;
    const device = (type: PoolTier) => (d: TwinPoolDevice) => ({
      deviceIndex: index++,
      type,
      bandwidth: d.bandwidth,
      allocator: new ExtentAllocator(d.bytes, POOL_ALIGNMENT),
    });
    this.ssd = o.ssd.map(device('ssd'));
    this.host = o.host.map(device('mem'));
  }

  get hasSsd(): boolean {
    return this.ssd.length > 0;
  }

  holdsOnHost(key: string): boolean {
    return this.table.holdsChunk(key, 'mem');
  }

  holds(key: string): boolean {
    return this.table.holdsChunk(key, 'mem') || this.table.holdsChunk(key, 'ssd');
  }

  /**
   * Writes chunks through (the TierWriter): host now — landing after the copy — and, unless
   * `hostOnly` (another node's KV, prefetched), to SSD behind it.
   */
  write(chunks: ReadonlyArray<{ readonly key: string; readonly position: number }>, hostOnly = false): void {
    const origin = ++this.origins;
    const segs: SegmentRef[] = [];
    // One export may name a chunk twice (two sequences sharing a prefix chunk): write it once.
    const seen = new Set<string>();
    const unique = chunks.filter((c) => !seen.has(c.key) && seen.add(c.key));
    for (let layer = 0; layer < this.o.layers; layer++)
      for (const c of unique) if (!this.table.get(c.key, layer, 'mem')) segs.push({ chunkKey: c.key, position: c.position, layer });
    if (segs.length === 0) return;
    const { writes, unplaced } = this.place(segs, this.host, 'mem');
    if (!hostOnly) for (const s of unplaced) this.enqueue({ seg: s, origin });
    if (writes.length === 0) return this.pump();
    const bytes = writes.reduce((n, w) => n + w.segments.length * this.o.segBytes, 0);
    this.events.after(transferMs(this.o.hostWrite, 1, bytes), {
      fire: () => {
        // Another write of the chunk landed first: keep it, give this copy's space back.
        const landed = this.land(writes, (seg) => !this.table.get(seg.chunkKey, seg.layer, 'mem'));
        this.put(landed, 'mem');
        for (const { seg } of landed) {
          if (hostOnly || !this.hasSsd || this.table.get(seg.chunkKey, seg.layer, 'ssd')) continue;
          const pin = this.table.pin(seg.chunkKey, seg.layer, 'mem');
          if (pin) this.enqueue({ seg, pin, origin });
        }
        this.pump();
      },
    });
  }

  /**
   * SSD-only segments a restore read into host memory join the host tier where it has free
   * room (a promotion never evicts: it lands in scratch otherwise).
   */
  promote(segs: readonly SegmentRef[]): void {
    if (segs.length === 0 || this.host.length === 0) return;
    const plan = planOffload(segs, this.host, this.stride);
    this.put(this.land(plan.writes, this.wantedIn('mem')), 'mem');
  }

  /** The host pool needs room: prefetched copies go first, then the least recently used request's later layers. */
  private evict(tier: PoolTier, bytes: number): void {
    let freed = tier === 'mem' ? this.drop(this.prefetched.purge(bytes)) : 0;
    if (freed >= bytes) return;
    const removals = this.table.evict(tier, bytes - freed, { lastTier: tier === 'ssd' || !this.hasSsd });
    this.counters.evictedSegments[tier] += removals.length;
    freed += removals.reduce((s, r) => s + r.location.length, 0);
    this.applyRemovals(removals);
  }

  /** Drops host replicas (withdrawn or purged prefetches); returns the bytes freed. */
  drop(drops: ReadonlyArray<{ readonly key: string; readonly layer: number }>): number {
    const removals: Removal[] = [];
    for (const d of drops) {
      const r = this.table.remove(d.key, d.layer, 'mem');
      if (r) removals.push(r);
    }
    this.applyRemovals(removals);
    return removals.reduce((n, r) => n + (r.deferred ? 0 : r.location.length), 0);
  }

  /** An advisory is withdrawn or expired: what it prefetched and nobody used leaves host memory; the device copies to unstage. */
  withdraw(w: Withdrawal): Array<{ readonly key: string }> {
    this.drop(w.drops);
    return w.unstage;
  }

  /** Another node's chunks arrived for an advisory: host only (no SSD copy of KV another node keeps), recorded for cooperative purge. */
  importPrefetched(
    chunks: ReadonlyArray<{ readonly key: string; readonly position: number }>,
    advisory: PrefetchAdvisory,
    onDevice: (key: string) => boolean,
    now: number,
  ): void {
    const fresh = chunks.filter((c) => this.table.layersIn(c.key, 'mem').length === 0);
    const staged = new Set(fresh.filter((c) => onDevice(c.key)).map((c) => c.key));
    this.write(fresh, true);
    const layers = Array.from({ length: this.o.layers }, (_, l) => l);
    for (const c of fresh)
      this.prefetched.add(advisory, {
        model: '',
        key: c.key,
        position: c.position,
        layers,
        bytes: this.stride,
        stamp: now,
        onDevice: staged.has(c.key),
      });
  }

  /** SSD replicas idle past the TTL leave; prefetches past their advisory's expiry are withdrawn (returns device chunks to unstage). */
  housekeeping(now: number): Array<{ readonly key: string }> {
    this.applyRemovals(this.table.expire(now));
    return this.withdraw(this.prefetched.expire(now));
  }

  unpin(pins: readonly PinHandle[]): void {
    for (const p of pins) {
      const loc = this.table.unpin(p);
      if (loc) this.free(loc);
    }
  }

  /** Partial chunks a longer prefix of the same chunk now covers. */
  dropSuperseded(keys: readonly string[]): void {
    for (const key of keys) if (this.table.positionOf(key) !== undefined) this.applyRemovals(this.table.removeChunk(key));
  }

  /** Used bytes of a tier. */
  usedBytes(tier: PoolTier): number {
    let used = 0;
    for (const d of tier === 'mem' ? this.host : this.ssd) used += d.allocator.capacity - d.allocator.freeBytes;
    return used;
  }

  private place(
    segs: readonly SegmentRef[],
    devices: readonly OffloadDevice[],
    tier: PoolTier,
  ): { writes: Array<DeviceWrite<SegmentRef>>; unplaced: SegmentRef[] } {
    if (devices.length === 0) return { writes: [], unplaced: [...segs] };
    const first = planOffload(segs, devices, this.stride);
    if (first.unplaced.length === 0) return first;
    this.evict(tier, first.unplaced.length * this.stride);
    const second = planOffload(first.unplaced, devices, this.stride);
    return { writes: [...first.writes, ...second.writes], unplaced: second.unplaced };
  }

  private enqueue(job: SsdJob): void {
    if (!this.hasSsd) {
      if (job.pin) this.unpin([job.pin]);
      this.counters.ssdSkipped++;
      return;
    }
    this.queue.push(job);
  }

  /** The SSD pump: one batch (one origin, at most SSD_BATCH_SEGMENTS) at a time. */
  private pump(): void {
    if (this.pumping || this.queue.length === 0) return;
    const origin = this.queue[0]!.origin;
    let n = 0;
    while (n < this.queue.length && n < SSD_BATCH_SEGMENTS && this.queue[n]!.origin === origin) n++;
    const batch = this.queue.splice(0, n);
    const todo = batch.filter(
      (j) => !this.table.get(j.seg.chunkKey, j.seg.layer, 'ssd') && (!j.pin || this.table.get(j.seg.chunkKey, j.seg.layer, 'mem')),
    );
    const segs = todo.map((j) => j.seg).sort((a, b) => a.layer - b.layer || a.position - b.position);
    const { writes, unplaced } = this.place(segs, this.ssd, 'ssd');
    this.counters.ssdSkipped += unplaced.length;
    const bytes = writes.reduce((s, w) => s + w.segments.length * this.o.segBytes, 0);
    this.pumping = true;
    this.events.after(writes.length === 0 ? 0 : transferMs(this.o.ssdWrite, 1, bytes), {
      fire: () => {
        this.pumping = false;
        this.put(this.land(writes, this.wantedIn('ssd')), 'ssd');
        this.unpin(batch.flatMap((j) => (j.pin ? [j.pin] : [])));
        this.pump();
      },
    });
  }

  /** The segments of `writes` that `keep` accepts, with where they landed; the others give their space back. */
  private land(writes: ReadonlyArray<DeviceWrite<SegmentRef>>, keep: (seg: SegmentRef) => boolean): Landed[] {
    const landed: Landed[] = [];
    for (const w of writes) {
      w.segments.forEach((seg, i) => {
        const location = locationOf(w, i, this.o.segBytes);
        if (keep(seg)) landed.push({ seg, location });
        else this.free(location);
      });
    }
    return landed;
  }

  /** A segment still worth landing in `tier`: no copy there yet, and its chunk not dropped meanwhile. */
  private wantedIn(tier: PoolTier): (seg: SegmentRef) => boolean {
    return (seg) => !this.table.get(seg.chunkKey, seg.layer, tier) && this.table.positionOf(seg.chunkKey) !== undefined;
  }

  private put(segs: readonly Landed[], tier: PoolTier): void {
    if (segs.length === 0) return;
    const now = this.events.now;
    const chunks = new Set<string>();
    for (const { seg, location } of segs) {
      this.table.put(seg, location, now);
      this.counters.writtenBytes[tier] += location.length;
      chunks.add(seg.chunkKey);
    }
    const whole = [...chunks].filter((k) => this.table.holdsChunk(k, tier));
    if (whole.length > 0) this.onChange({ kind: 'stored', tier, keys: whole });
  }

  private applyRemovals(removals: readonly Removal[]): void {
    if (removals.length === 0) return;
    const touched = new Map<PoolTier, Set<string>>();
    for (const r of removals) {
      if (!r.deferred) this.free(r.location);
      let keys = touched.get(r.tier);
      if (!keys) touched.set(r.tier, (keys = new Set()));
      keys.add(r.chunkKey);
    }
    for (const [tier, keys] of touched) {
      const gone: string[] = [];
      const cut: string[] = [];
      for (const k of keys) {
        if (this.table.layersIn(k, tier).length === 0) gone.push(k);
        else if (!this.table.holdsChunk(k, tier)) cut.push(k);
      }
      if (gone.length > 0) this.onChange({ kind: 'removed', tier, keys: gone });
      if (cut.length > 0) this.onChange({ kind: 'truncated', tier, keys: cut });
    }
  }

  private free(location: { readonly deviceIndex: number; readonly offset: number; readonly length: number }): void {
    const d = [...this.host, ...this.ssd].find((x) => x.deviceIndex === location.deviceIndex)!;
    d.allocator.free(location.offset, location.length);
  }
}

/** A segment written to a pool device, and where. */
type Landed = { readonly seg: SegmentRef; readonly location: ReturnType<typeof locationOf> };

function locationOf(w: DeviceWrite<SegmentRef>, i: number, segBytes: number) {
  return { deviceIndex: w.deviceIndex, type: w.type, offset: w.offsets[i]!, length: segBytes, crc32c: 0 };
}
