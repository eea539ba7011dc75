import {
  BufferPool,
  putRecord,
  removalChanges,
  replayJournal,
  type ExtentAllocator,
  type HoldingChange,
  type KvRowGeometry,
  type PoolTier,
  type Removal,
  type SegmentLocation,
  type SegmentRef,
} from '@mnemo/kv-core';
import { ModelKv } from './model.kv.js';
import { allocHostBuffer, freeHostBuffer, type SsdPoolDevice } from '@mnemo/native-cuda';
import type { PoolDevice } from './pool.devices.js';
import { SsdJournalFile, type JournalHealth } from './ssd-journal.file.js';

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

/** The addon's aligned host memory: O_DIRECT reads land in it. */
export const HOST_MEMORY = { alloc: allocHostBuffer, free: freeHostBuffer };

/** What replaying one model's SSD journal found. */
export interface JournalReplay {
  readonly model: string;
  readonly applied: number;
  readonly dropped: number;
  readonly truncatedBytes: number;
}

/**
 * The shared state of the offload tiers (host-memory pool and SSD pool, ARCHITECTURE §4
 * "Unified host/SSD pool"): the pool devices with their allocators, one lookup table per model,
 * and the SSD journals. Writers and readers go through it to take and give back space, so that
 * every removal frees its extent exactly once, is journaled when it leaves the SSD, and is
 * reported as a KV event.
 */
export class OffloadTiers {
  readonly host: readonly PoolDevice[];
  readonly ssd: readonly PoolDevice[];
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
   * FAULT INJECTION ONLY, never for production: restores skip the CRC32C check of the bytes they
   * read, so corrupted KV reaches the engine. Off unless a test sets it (KvStoreSettings
   * `faultSkipRestoreCrc`); it exists so a control test can show what the check prevents.
   */
  faultSkipRestoreCrc = false;
  /** Told of each failed journal flush (logged by the store). */
  onJournalFailure?: (model: string, e: unknown) => void;
  /** Layer payloads and scratch of restores, reused from one restore to the next. */
  readonly buffers = new BufferPool(HOST_MEMORY);
  private readonly models = new Map<string, ModelKv>();
  private readonly byIndex = new Map<number, PoolDevice>();

  constructor(
    readonly devices: readonly PoolDevice[],
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

  model(model: string): ModelKv {
    const m = this.models.get(model);
    if (!m) throw new RangeError(`no offload tier state for model ${model}`);
    return m;
  }

  allModels(): ModelKv[] {
    return [...this.models.values()];
  }

  device(index: number): PoolDevice {
    const d = this.byIndex.get(index);
    if (!d) throw new RangeError(`unknown pool device ${index}`);
    return d;
  }

  /**
   * Registers a model; with SSD devices, opens its journal and replays it so the SSD replicas a
   * previous run wrote are found again (warm restart). Replicas the journal cannot vouch for
   * are dropped and their space stays free.
   */
  async addModel(model: string, geometry: KvRowGeometry, journalPath?: string): Promise<JournalReplay> {
    if (this.models.has(model)) throw new RangeError(`model ${model} registered twice`);
    const m = new ModelKv(model, geometry, this.ttlMs);
    this.models.set(model, m);
    if (this.ssd.length === 0 || journalPath === undefined) return { model, applied: 0, dropped: 0, truncatedBytes: 0 };
    const { journal, found } = await SsdJournalFile.open(journalPath, geometry.layers);
    m.journal = journal;
    journal.onFailure = (e) => {
      this.counters.journalWriteFailures++;
      this.onJournalFailure?.(model, e);
    };
    const allocators = new Map<number, ExtentAllocator>(this.ssd.map((d) => [d.index, d.allocator]));
    const report = replayJournal(found.decoded, m.table, allocators);
    this.counters.journalReplays++;
    this.counters.journalReplayedSegments += report.applied;
    const stored = new Set<string>();
    for (const e of m.table.entries('ssd')) stored.add(e.chunkKey);
    const whole = [...stored].filter((k) => m.table.holdsChunk(k, 'ssd'));
    if (whole.length > 0) this.onChange({ kind: 'stored', tier: 'ssd', model, keys: whole });
    // A replay that dropped puts or cut a torn tail leaves a log worth rewriting once.
    if (report.dropped.length > 0 || found.truncatedBytes > 0) await journal.compact(m.table);
    return { model, applied: report.applied, dropped: report.dropped.length, truncatedBytes: found.truncatedBytes };
  }

  /** Records a replica written to a tier (journaled when on SSD) and reports chunks now whole there. */
  put(m: ModelKv, segs: ReadonlyArray<{ seg: SegmentRef; location: SegmentLocation }>): void {
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
   * Frees the space of removed replicas (deferred ones come back through {@link unpin}),
   * journals SSD removals, and reports each touched chunk as removed or truncated.
   */
  applyRemovals(m: ModelKv, removals: readonly Removal[]): void {
    if (removals.length === 0) return;
    for (const r of removals) {
      if (!r.deferred) this.free(r.location);
      if (r.tier === 'ssd') m.journal?.append([{ kind: 'remove', chunkKey: r.chunkKey, layer: r.layer }]);
    }
    for (const c of removalChanges(m.table, m.model, removals)) this.onChange(c);
  }

  /**
   * Drops segments the host pool may lose before anything else (prefetched copies of another
   * node's KV: no copy-back); returns the bytes freed. Set by the store.
   */
  purgeFirst?: (bytes: number) => number;

  /** Evicts from `tier` (least recently used request, later layers first) until `bytes` are free. */
  evict(m: ModelKv, tier: PoolTier, bytes: number): number {
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

  /** Gives back the space of a replica whose removal was deferred by a pin. */
  unpin(m: ModelKv, pins: ReadonlyArray<Parameters<ModelKv['table']['unpin']>[0]>): void {
    for (const p of pins) {
      const loc = m.table.unpin(p);
      if (loc) this.free(loc);
    }
  }

  /** Told before a removal that is not an eviction is reported (a corrupt or expired copy), for `why`. */
  onDrop?: (key: string, tier: PoolTier, reason: 'corrupt' | 'expired') => void;

  /** A replica that failed its checksum: out of the table (and journal) now, so the next request recomputes. */
  dropCorrupt(m: ModelKv, key: string, layer: number, tier: PoolTier): void {
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

  /**
   * Makes what was written durable in the order a restart needs: the SSD data first (fdatasync
   * of every SSD pool), then the journal records naming it — a record never points at bytes
   * that could still be lost.
   */
  async flushJournals(): Promise<void> {
    if (!this.allModels().some((m) => m.journal?.hasPending)) return;
    await Promise.all(this.ssd.map((d) => (d.device as SsdPoolDevice).flush()));
    await Promise.all(this.allModels().map((m) => m.journal?.flush()));
  }

  /** Rewrites a journal as a snapshot once its log has grown well past the live state. */
  async compactJournals(): Promise<void> {
    for (const m of this.models.values()) {
      if (!m.journal) continue;
      const live = m.table.stats('ssd').segments;
      if (m.journal.recordsSinceCompaction > 4 * live + 10_000) await m.journal.compact(m.table);
    }
  }

  /** Each journaled model's journal health (the node's /healthz and metrics). */
  journalHealth(): Array<{ model: string } & JournalHealth> {
    return this.allModels().flatMap((m) => (m.journal ? [{ model: m.model, ...m.journal.health }] : []));
  }

  async close(): Promise<void> {
    this.buffers.close();
    await Promise.all(this.allModels().map((m) => m.journal?.close()));
  }
}
