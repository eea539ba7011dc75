import type { KvRowGeometry } from '../layout/index.js';
import type { ExtentAllocator } from '../pool/extent.allocator.js';
import { removalChanges, type HoldingChange } from '../pool/holding.changes.js';
import type { DecodedJournal, JournalRecord } from '../pool/journal.codec.js';
import { putRecord, replayJournal } from '../pool/journal.replay.js';
import { LookupTable } from '../pool/lookup.table.js';
import type { PinHandle, PrefixChunk, Removal } from '../pool/lookup.types.js';
import { planOffload, type DeviceWrite, type OffloadDevice } from '../pool/offload.planner.js';
import type { Drop } from '../pool/prefetched.chunks.js';
import { restoreTier } from '../pool/restore.planner.js';
import { ErrorCode, MnemoError } from '../errors/index.js';
import type { PoolTier, SegmentLocation, SegmentRef } from '../pool/pool.types.js';
import { segmentBytes, segmentStride } from '../pool/segment.sizing.js';

/** Every offset and size in the pools is a multiple of this, so host ↔ SSD copies need no bounce buffer. */
export const POOL_ALIGNMENT = 4096;
/**
 * Journal device indices: SSD pool i is i, host pool device i is HOST_INDEX_BASE + i, so a
 * restarted node with another host layout still finds its SSD replicas under the same index.
 */
export const HOST_INDEX_BASE = 256;

/**
 * How the host pool's bytes are split into devices: `devices` regions of equal, aligned size
 * (none without host bytes), indexed from HOST_INDEX_BASE, one per NUMA node in turn when the
 * machine has several (the Unified-pooling layout).
 */
export function hostPoolLayout(
  hostBytes: number,
  devices: number,
  numaNodes: readonly number[],
): Array<{ index: number; bytes: number; numaNode: number | undefined }> {
  const count = hostBytes > 0 ? devices : 0;
  const bytes = Math.floor(hostBytes / Math.max(1, count) / POOL_ALIGNMENT) * POOL_ALIGNMENT;
  const numaNode = (i: number) => (numaNodes.length > 1 ? numaNodes[i % numaNodes.length] : undefined);
  return Array.from({ length: count }, (_, i) => ({ index: HOST_INDEX_BASE + i, bytes, numaNode: numaNode(i) }));
}

/** One device of the unified pool as the ledger sees it: its tier and the allocator that places segments on it. */
export interface LedgerDevice {
  readonly index: number;
  readonly type: PoolTier;
  readonly allocator: ExtentAllocator;
  /** Bytes/s used for bandwidth-proportional placement (measured or configured). */
  readonly bandwidth: number;
}

/** Where SSD records go (the node: the model's journal file, written at the next flush). */
export interface JournalSink {
  append(records: readonly JournalRecord[]): void;
}

/** A change to what a pool tier holds of some chunks (the KV events the node publishes); `truncated`: `layers` still held from layer 0. */
export type TierChange = HoldingChange & { readonly tier: PoolTier };

/** Counters the store exports as metrics. */
export interface TierCounters {
  writtenBytes: Record<PoolTier, number>;
  readBytes: Record<PoolTier, number>;
  evictedSegments: Record<PoolTier, number>;
  expiredSegments: number;
  crcFailures: number;
  journalReplays: number;
  journalReplayedSegments: number;
  /** Journal flushes that failed (their records stay queued and are retried). */
  journalWriteFailures: number;
}

/**
 * What the offload tiers keep per model: its KV geometry, the sizes that follow from it, and
 * its lookup table (one per geometry: segment sizes differ between models). A segment is one
 * layer of one 256-token chunk, fp32, `[K|V][token][kv_head][head_dim]`.
 */
export class ModelKv<J extends JournalSink = JournalSink> {
  readonly table: LookupTable;
  /** Bytes of one segment's payload. */
  readonly segBytes: number;
  /** Bytes a segment takes in a pool device (rounded up to the pool alignment). */
  readonly stride: number;
  /** Bytes an SSD transfer of one segment moves: O_DIRECT moves whole sectors. */
  readonly ioBytes: number;
  journal?: J;

  constructor(
    readonly model: string,
    readonly geometry: KvRowGeometry,
    ttlMs: number,
  ) {
    this.table = new LookupTable({ numLayers: geometry.layers, ttlMs });
    this.segBytes = segmentBytes({ layers: geometry.layers, kvHeads: 1, headDim: geometry.rowElems, bytesPerElement: 4 });
    this.stride = segmentStride(this.segBytes, POOL_ALIGNMENT);
    this.ioBytes = this.segBytes % POOL_ALIGNMENT === 0 ? this.segBytes : this.stride;
  }
}

/** Whether a journal's log has grown well past the live state it names, so a snapshot would replace it. */
export const journalNeedsCompaction = (recordsSinceCompaction: number, liveSegments: number): boolean =>
  recordsSinceCompaction > 4 * liveSegments + 10_000;

/**
 * The books of the offload tiers (host-memory pool and SSD pool, ARCHITECTURE §4 "Unified
 * host/SSD pool"): the pool devices' allocators and one lookup table per model. Writers and
 * readers go through it to take and give back space, so that every removal frees its extent
 * exactly once, is journaled when it leaves the SSD, and is reported as a change. The node adds
 * the devices' memory and the journal files around it.
 */
export class TierLedger<D extends LedgerDevice, J extends JournalSink> {
  readonly host: readonly D[];
  readonly ssd: readonly D[];
  readonly counters: TierCounters = {
    writtenBytes: { mem: 0, ssd: 0 },
    readBytes: { mem: 0, ssd: 0 },
    evictedSegments: { mem: 0, ssd: 0 },
    expiredSegments: 0,
    crcFailures: 0,
    journalReplays: 0,
    journalReplayedSegments: 0,
    journalWriteFailures: 0,
  };
  /**
   * Drops segments the host pool may lose before anything else (prefetched copies of another
   * node's KV: no copy-back); returns the bytes freed. Set by the store.
   */
  purgeFirst?: (bytes: number) => number;
  /** Told before a removal that is not an eviction is reported (a corrupt or expired copy), for `why`. */
  onDrop?: (key: string, tier: PoolTier, reason: 'corrupt' | 'expired') => void;
  private readonly models = new Map<string, ModelKv<J>>();
  private readonly byIndex = new Map<number, D>();

  constructor(
    readonly devices: readonly D[],
    private readonly ttlMs: number,
    private readonly onChange: (c: TierChange) => void,
    readonly now: () => number = Date.now,
  ) {
    this.host = devices.filter((d) => d.type === 'mem');
    this.ssd = devices.filter((d) => d.type === 'ssd');
    for (const d of devices) this.byIndex.set(d.index, d);
  }

  has(model: string): boolean {
    return this.models.has(model);
  }

  model(model: string): ModelKv<J> {
    const m = this.models.get(model);
    if (!m) throw new RangeError(`no offload tier state for model ${model}`);
    return m;
  }

  allModels(): Array<ModelKv<J>> {
    return [...this.models.values()];
  }

  device(index: number): D {
    const d = this.byIndex.get(index);
    if (!d) throw new RangeError(`unknown pool device ${index}`);
    return d;
  }

  /** A model's books, empty. */
  protected register(model: string, geometry: KvRowGeometry): ModelKv<J> {
    if (this.models.has(model)) throw new RangeError(`model ${model} registered twice`);
    const m = new ModelKv<J>(model, geometry, this.ttlMs);
    this.models.set(model, m);
    return m;
  }

  /**
   * Takes in what a model's journal names, so the SSD replicas a previous run wrote are found
   * again (warm restart), and reports the chunks now whole on SSD. Replicas the journal cannot
   * vouch for are dropped and their space stays free; returns how many were.
   */
  protected replay(m: ModelKv<J>, decoded: DecodedJournal): { applied: number; dropped: number } {
    const report = replayJournal(decoded, m.table, new Map(this.ssd.map((d) => [d.index, d.allocator])));
    this.counters.journalReplays++;
    this.counters.journalReplayedSegments += report.applied;
    const stored = new Set<string>();
    for (const e of m.table.entries('ssd')) stored.add(e.chunkKey);
    const whole = [...stored].filter((k) => m.table.holdsChunk(k, 'ssd'));
    if (whole.length > 0) this.onChange({ kind: 'stored', tier: 'ssd', model: m.model, keys: whole });
    return { applied: report.applied, dropped: report.dropped.length };
  }

  /** Records a replica written to a tier (journaled when on SSD) and reports chunks now whole there. */
  put(m: ModelKv<J>, segs: ReadonlyArray<{ seg: SegmentRef; location: SegmentLocation }>): void {
    const now = this.now();
    const chunks = new Set<string>();
    for (const { seg, location } of segs) {
      m.table.put(seg, location, now);
      this.counters.writtenBytes[location.type] += location.length;
      chunks.add(seg.chunkKey);
    }
    const tier = segs[0]?.location.type;
    if (!tier) return;
    if (tier === 'ssd') m.journal?.append(segs.map(({ seg, location }) => putRecord(seg, location, now)));
    const whole = [...chunks].filter((k) => m.table.holdsChunk(k, tier));
    if (whole.length > 0) this.onChange({ kind: 'stored', tier, model: m.model, keys: whole });
  }

  /**
   * Records replicas just copied into `tier`, first come first kept: another write of the same
   * segment (a peer import racing the engine's own export, two restores promoting one segment)
   * may have landed while these copied, and then this copy's space goes back. Returns those kept.
   */
  putFirst<S extends { seg: SegmentRef; location: SegmentLocation }>(m: ModelKv<J>, copied: readonly S[], tier: PoolTier): S[] {
    const kept = copied.filter(({ seg, location }) => {
      if (!m.table.get(seg.chunkKey, seg.layer, tier)) return true;
      this.free(location);
      return false;
    });
    this.put(m, kept);
    return kept;
  }

  /**
   * Frees the space of removed replicas (deferred ones come back through {@link unpin}),
   * journals SSD removals, and reports each touched chunk as removed or truncated.
   */
  applyRemovals(m: ModelKv<J>, removals: readonly Removal[]): void {
    if (removals.length === 0) return;
    for (const r of removals) {
      if (!r.deferred) this.free(r.location);
      if (r.tier === 'ssd') m.journal?.append([{ kind: 'remove', chunkKey: r.chunkKey, layer: r.layer }]);
    }
    for (const c of removalChanges(m.table, m.model, removals)) this.onChange(c);
  }

  /** Evicts from `tier` (least recently used request, later layers first) until `bytes` are free. */
  evict(m: ModelKv<J>, tier: PoolTier, bytes: number): number {
    const lastTier = tier === 'ssd' || this.ssd.length === 0;
    let freed = tier === 'mem' && this.purgeFirst ? this.purgeFirst(bytes) : 0;
    // This model first, then the others: a full pool is shared.
    for (const other of [m, ...this.allModels().filter((x) => x !== m)]) {
      if (freed >= bytes) break;
      const removals = other.table.evict(tier, bytes - freed, { lastTier });
      this.counters.evictedSegments[tier] += removals.length;
      freed += removals.reduce((s, r) => s + r.location.length, 0);
      this.applyRemovals(other, removals);
    }
    return freed;
  }

  /** A tier's devices as offload placement sees them. */
  offloadDevices(tier: PoolTier): OffloadDevice[] {
    return (tier === 'mem' ? this.host : this.ssd).map((d) => ({
      deviceIndex: d.index,
      type: d.type,
      bandwidth: d.bandwidth,
      allocator: d.allocator,
    }));
  }

  /** Plans segments onto one tier's devices, evicting once when they do not all fit. */
  place<S extends SegmentRef>(m: ModelKv<J>, segs: readonly S[], tier: PoolTier): { writes: DeviceWrite<S>[]; unplaced: S[] } {
    if ((tier === 'mem' ? this.host : this.ssd).length === 0) return { writes: [], unplaced: [...segs] };
    const first = planOffload(segs, this.offloadDevices(tier), m.stride);
    if (first.unplaced.length === 0) return first;
    this.evict(m, tier, first.unplaced.length * m.stride);
    const second = planOffload(first.unplaced, this.offloadDevices(tier), m.stride);
    return { writes: [...first.writes, ...second.writes], unplaced: second.unplaced };
  }

  /**
   * Pins every layer of every chunk a restore will read, in the tier it reads it from (host
   * first), by chunk then layer. Throws DataLoss, holding nothing, if a replica left since the lookup.
   */
  pinRestore(m: ModelKv<J>, chunks: readonly PrefixChunk[]): PinHandle[][] {
    const pins: PinHandle[][] = [];
    for (const c of chunks) {
      const layers: PinHandle[] = [];
      pins.push(layers);
      for (let layer = 0; layer < m.geometry.layers; layer++) {
        const tier = restoreTier(c, layer);
        const pin = m.table.pin(c.chunkKey, layer, tier);
        if (pin) {
          layers.push(pin);
          continue;
        }
        this.unpin(m, pins.flat());
        throw new MnemoError(ErrorCode.DataLoss, `chunk ${c.chunkKey} layer ${layer} left the ${tier} tier before its restore`);
      }
    }
    return pins;
  }

  /** Removes host replicas of prefetched segments (space of pinned ones comes back on unpin); returns bytes freed. */
  dropHost(drops: readonly Drop[]): number {
    let bytes = 0;
    const byModel = new Map<string, Drop[]>();
    for (const d of drops) byModel.set(d.model, [...(byModel.get(d.model) ?? []), d]);
    for (const [model, ds] of byModel) {
      if (!this.has(model)) continue;
      const m = this.model(model);
      const removals = ds.map((d) => m.table.remove(d.key, d.layer, 'mem')).filter((r) => r !== null);
      bytes += removals.reduce((n, r) => n + (r.deferred ? 0 : r.location.length), 0);
      this.applyRemovals(m, removals);
    }
    return bytes;
  }

  /** Whether host or SSD holds every layer of the chunk. */
  holdsWhole(m: ModelKv<J>, key: string): boolean {
    return m.table.holdsChunk(key, 'mem') || m.table.holdsChunk(key, 'ssd');
  }

  /**
   * Pins layers [layerStart, layerEnd) of one chunk to read them (the host replica where there is
   * one, else the SSD's), in the model that knows the key (keys are salted with their model, so
   * the first that knows it owns it). Undefined, holding nothing, when some layer is not held.
   */
  pinSlice(key: string, layerStart: number, layerEnd: number): { m: ModelKv<J>; pins: PinHandle[] } | undefined {
    const m = this.allModels().find((x) => x.table.positionOf(key) !== undefined);
    if (!m || layerEnd > m.geometry.layers) return undefined;
    const pins: PinHandle[] = [];
    for (let layer = layerStart; layer < layerEnd; layer++) {
      const pin = m.table.pin(key, layer, 'mem') ?? m.table.pin(key, layer, 'ssd');
      if (!pin) {
        this.unpin(m, pins);
        return undefined;
      }
      pins.push(pin);
    }
    return { m, pins };
  }

  /** Chunks nobody needs any more (partial chunks a longer prefix of the same chunk now covers): out of every tier. */
  dropChunks(m: ModelKv<J>, keys: readonly string[]): void {
    for (const key of keys) if (m.table.positionOf(key) !== undefined) this.applyRemovals(m, m.table.removeChunk(key));
  }

  /** Gives back the space of replicas whose removal was deferred by a pin. */
  unpin(m: ModelKv<J>, pins: readonly PinHandle[]): void {
    for (const p of pins) {
      const loc = m.table.unpin(p);
      if (loc) this.free(loc);
    }
  }

  /** A replica a restore found corrupt: dropped ({@link dropCorrupt}), then DataLoss, so the prefill fails and the request recomputes. */
  failCorrupt(m: ModelKv<J>, key: string, layer: number, tier: PoolTier): never {
    this.dropCorrupt(m, key, layer, tier);
    throw new MnemoError(
      ErrorCode.DataLoss,
      `chunk ${key} layer ${layer}: CRC32C mismatch in the ${tier} tier (dropped; the request recomputes)`,
    );
  }

  /** A replica that failed its checksum: out of the table (and journal) now, so the next request recomputes. */
  dropCorrupt(m: ModelKv<J>, key: string, layer: number, tier: PoolTier): void {
    this.counters.crcFailures++;
    this.onDrop?.(key, tier, 'corrupt');
    const r = m.table.remove(key, layer, tier);
    if (r) this.applyRemovals(m, [r]);
  }

  /** SSD replicas idle past the TTL leave the pool. */
  expire(): number {
    let n = 0;
    for (const m of this.models.values()) {
      const removals = m.table.expire(this.now());
      n += removals.length;
      for (const r of removals) this.onDrop?.(r.chunkKey, r.tier, 'expired');
      this.applyRemovals(m, removals);
    }
    this.counters.expiredSegments += n;
    return n;
  }

  free(location: SegmentLocation): void {
    this.device(location.deviceIndex).allocator.free(location.offset, location.length);
  }

  /** Used and total bytes per tier, for metrics. */
  usage(tier: PoolTier): { used: number; capacity: number } {
    let used = 0;
    let capacity = 0;
    for (const d of tier === 'mem' ? this.host : this.ssd) {
      const s = d.allocator.stats();
      used += s.usedBytes;
      capacity += s.capacity;
    }
    return { used, capacity };
  }
}
