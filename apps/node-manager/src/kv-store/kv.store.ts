import { join } from 'node:path';
import { mkdir } from 'node:fs/promises';
import {
  CHUNK_TOKENS,
  chunkKeys,
  chunksCovering,
  hostResidentPrefix,
  importedChunks,
  journalFileName,
  PrefetchedChunks,
  RestoreCounters,
  restoreReach,
  restoreTouchKeys,
  worthWarming,
  type HoldingChange,
  type KvRowGeometry,
  type PrefetchAdvisory,
  type PrefixChunk,
  type Withdrawal,
  WarmRestores,
  withdrawnChunks,
} from '@mnemo/kv-core';
import type { Engine, HeldKv, KvRestorePlan } from '@mnemo/engine';
import { OffloadTiers, type JournalReplay, type TierChange } from './offload.tiers.js';
import { closePoolDevices, openPoolDevices, type PoolReport } from './pool.devices.js';
import { RestoreReader } from './restore.reader.js';
import { readChunkSlice, type ChunkSlice } from './chunk.reader.js';

import type { ChunkStore } from './chunk-store.port.js';
import type { KvStoreSettings } from '../config/kv-store.settings.js';
import { TierWriter, type ChunkPayload } from './tier.writer.js';
import { DevicePromotion } from './device.promotion.js';
import { ChunkExports } from './chunk.exports.js';
import type { StoreLog } from './store.log.js';
import type { StoredPrompt } from './stored.prompt.js';

export type { PeerSource, StoredPrompt } from './stored.prompt.js';

/**
 * The node's tiered KV store behind the engine's device cache (ARCHITECTURE §4): every whole
 * chunk a sequence writes on the device is exported and written through to the host pool and,
 * in the background, to the SSD pool (which keeps a complete copy and survives a restart through
 * its journal); a request whose prefix the device lacks gets a restore plan that loads it back
 * layer by layer while the engine computes. Every change of what a tier holds is reported.
 */
export class KvStore implements ChunkStore {
  /** Chunks served to peers and imported from them. */
  readonly peerCounters = { servedChunks: 0, servedBytes: 0, importedChunks: 0, prefetchedChunks: 0, prefetchedBytes: 0 };
  /** Prefetched chunks also go to free device blocks (NODE_PREFETCH_PROMOTE). */
  readonly promotion: DevicePromotion;
  /** Chunks advisories pulled in that no request used yet (cooperative memory). */
  readonly prefetched = new PrefetchedChunks();
  readonly counters = new RestoreCounters();
  /** Restores started while their requests waited (warm): used by their pass, stale (positions changed), expired. */
  get warmCounters(): WarmRestores<RestoreReader>['counters'] {
    return this.warmed.counters;
  }
  private readonly warmed = new WarmRestores<RestoreReader>((ms, fn) => {
    const t = setTimeout(fn, ms).unref();
    return () => clearTimeout(t);
  });
  /** Swapped-out sequences whose leading chunks the host pool keeps pinned for them, and those chunks. */
  readonly swapHolds = { held: 0, chunks: 0 };
  /** Told the blocked I/O of every restoring prefill (the metrics histogram). */
  onBlocked?: (ms: number) => void;
  private readonly unwatch: () => void;
  /** Whole chunks the device completes, exported and written through to the tiers. */
  private readonly exports: ChunkExports;
  private readonly timer: NodeJS.Timeout;
  /** The housekeeping pass running now: one at a time, and close() waits for it. */
  private housekeepingRun?: Promise<void>;
  private closing = false;

  private constructor(
    readonly tiers: OffloadTiers,
    readonly writer: TierWriter,
    private readonly engine: Engine,
    private readonly onChange: (c: HoldingChange) => void,
    private readonly log: StoreLog,
    readonly report: PoolReport,
    readonly replays: readonly JournalReplay[],
    housekeepingMs: number,
  ) {
    this.promotion = new DevicePromotion(engine, log);
    this.exports = new ChunkExports(tiers, writer, engine, onChange, log);
    this.unwatch = engine.watchChunks((e) => this.exports.onDeviceChunk(e));
    tiers.purgeFirst = (bytes) => this.tiers.dropHost(this.prefetched.purge(bytes));
    this.timer = setInterval(() => void this.housekeeping(), housekeepingMs).unref();
  }

  /**
   * Opens the pool devices, replays each model's SSD journal (a warm restart finds its chunks),
   * and starts watching the engine. Undefined when the store is off or the engine keeps no KV
   * bytes (the sim engine).
   */
  static async open(
    s: KvStoreSettings,
    engine: Engine,
    onChange: (c: HoldingChange) => void,
    log: StoreLog,
    /** Tier-only models the engine does not serve (DroidSpeak E caches), journaled like the rest. */
    extra: ReadonlyArray<{ readonly id: string; readonly geometry: KvRowGeometry }> = [],
  ): Promise<KvStore | undefined> {
    const models = engine.models().filter((m) => engine.kvLayout(m.id) !== undefined);
    if (!s.enabled || models.length === 0) return undefined;
    await mkdir(s.dataDir, { recursive: true });
    const { devices, report } = await openPoolDevices(s);
    const tiers = new OffloadTiers(devices, s.ssdTtlMs, (c: TierChange) => onChange(c));
    tiers.faultSkipRestoreCrc = s.faultSkipRestoreCrc === true;
    tiers.onJournalFailure = (model, e) =>
      log('error', 'SSD journal write failed: records kept, file cut back, retrying', {
        model,
        err: e instanceof Error ? e.message : String(e),
      });
    try {
      const replays: JournalReplay[] = [];
      for (const m of models) replays.push(await tiers.addModel(m.id, engine.kvLayout(m.id)!, join(s.dataDir, journalFileName(m.id))));
      for (const x of extra) replays.push(await tiers.addModel(x.id, x.geometry, join(s.dataDir, journalFileName(x.id))));
      const writer = new TierWriter(
        tiers,
        (e, what) => log('error', `KV store ${what} failed`, { err: e instanceof Error ? e : String(e) }),
        s.ssdQueueBytes,
      );
      return new KvStore(tiers, writer, engine, onChange, log, report, replays, Math.min(60_000, Math.max(1000, s.ssdTtlMs / 4)));
    } catch (e) {
      await tiers.close();
      await closePoolDevices(devices);
      throw e;
    }
  }

  /** Tokens past `deviceTokens` the tiers could restore for this prompt now (planning estimate; takes nothing). */
  restorableUntil(p: StoredPrompt, deviceTokens: number): number {
    if (!this.tiers.has(p.model)) return deviceTokens;
    return Math.max(deviceTokens, restoreReach(this.tiers.model(p.model).table, p, deviceTokens).until);
  }

  /**
   * A restore plan for positions [deviceTokens, until) of the prompt, pinning every replica it
   * will read; undefined when the tiers hold nothing past what the device has.
   */
  restorePlan(p: StoredPrompt, deviceTokens: number, requestId?: string): KvRestorePlan | undefined {
    if (!this.tiers.has(p.model)) {
      if (requestId !== undefined) this.warmed.cool(requestId);
      return undefined;
    }
    const m = this.tiers.model(p.model);
    const reach = restoreReach(m.table, p, deviceTokens);
    const { chunks, until } = reach;
    m.table.touch(restoreTouchKeys(p, reach), this.tiers.now());
    this.prefetched.adopt(p.chunkKeys);
    let reader = requestId === undefined ? undefined : this.warmed.takeFor(requestId, deviceTokens, until);
    if (until <= deviceTokens) return undefined;
    reader ??= this.reader(p.model, chunks, deviceTokens, until);
    if (!reader) return undefined;
    this.counters.plans++;
    return {
      until,
      load: (layer) => reader.load(layer),
      loadInto: (layer, target) => reader.loadInto(layer, target),
      sources: () => {
        const t = reader.tokensByTier();
        return { host: t.mem, ssd: t.ssd, peer: 0 };
      },
      done: (ok, blockedMs) => {
        const byTier = reader.tokensByTier();
        reader.release();
        this.counters.ended(ok, until - deviceTokens, byTier, blockedMs);
        this.onBlocked?.(blockedMs ?? 0);
      },
    };
  }

  /**
   * FastSwitch's host copy and this host pool as one (SwapHostCopies): the leading whole chunks
   * of a sequence's KV that the host pool holds in every layer, pinned until the sequence no
   * longer needs them, so its swap-out copies only the rest. A pinned replica is not evicted;
   * the pool fills up to its size with pins at most and then writes fail over to SSD alone.
   */
  holdForSwap(model: string, salt: string, tokens: readonly number[]): HeldKv | undefined {
    if (!this.tiers.has(model)) return undefined;
    const m = this.tiers.model(model);
    const chunks = hostResidentPrefix(m.table.longestPrefix(chunkKeys(model, salt, tokens)));
    if (chunks.length === 0) return undefined;
    const reader = this.reader(model, chunks, 0, chunks.length * CHUNK_TOKENS);
    if (!reader) return undefined;
    this.swapHolds.held++;
    this.swapHolds.chunks += chunks.length;
    return {
      until: reader.until,
      loadInto: (layer, target) => reader.loadInto(layer, target),
      release: () => {
        this.swapHolds.held--;
        this.swapHolds.chunks -= chunks.length;
        reader.release();
      },
    };
  }

  /**
   * Starts the SSD reads a restore of this request will need, while it waits for its pass: a
   * reader is planned (its replicas pinned) and its read-ahead started now; {@link restorePlan}
   * with the same id takes it over if the positions are unchanged. Only a restore that reads
   * SSD gains from it. Released by {@link cool}, or after WARM_TTL_MS.
   */
  warm(requestId: string, p: StoredPrompt, deviceTokens: number): void {
    if (this.warmed.has(requestId) || !this.tiers.has(p.model)) return;
    const m = this.tiers.model(p.model);
    const reach = restoreReach(m.table, p, deviceTokens);
    if (!worthWarming(reach, deviceTokens)) return;
    const { chunks, until } = reach;
    const reader = this.reader(p.model, chunks, deviceTokens, until);
    if (!reader) return;
    reader.prefetch();
    this.warmed.add(requestId, reader);
  }

  cool(requestId: string): void {
    this.warmed.cool(requestId);
  }

  /** A reader for [from, until) over `chunks` (those from the one `from` falls in), or undefined (logged) when a replica is gone. */
  private reader(model: string, chunks: readonly PrefixChunk[], from: number, until: number): RestoreReader | undefined {
    const m = this.tiers.model(model);
    try {
      return new RestoreReader(this.tiers, m, chunksCovering(chunks, from, until), from, until);
    } catch (e) {
      this.log('warn', 'KV restore not planned', { model, err: (e as Error).message });
      return undefined;
    }
  }

  /** Layers of a chunk for this node's own use (not counted as served to a peer). */
  readLocal(key: string, layerStart: number, layerEnd: number): Promise<ChunkSlice | undefined> {
    return readChunkSlice(this.tiers, key, layerStart, layerEnd);
  }

  /** Whether host or SSD holds every layer of the chunk. */
  holds(model: string, key: string): boolean {
    return this.tiers.has(model) && this.tiers.holdsWhole(this.tiers.model(model), key);
  }

  /** Whole chunks this node produced outside the engine's device cache (E caches), written through like its own. */
  async writeChunks(model: string, chunks: readonly ChunkPayload[]): Promise<void> {
    if (this.tiers.has(model) && chunks.length > 0) await this.writer.write(model, chunks);
  }

  /** Bytes the host pool holds of a model's chunks. */
  hostBytes(model: string): number {
    if (!this.tiers.has(model)) return 0;
    const m = this.tiers.model(model);
    return [...m.table.entries('mem')].length * m.segBytes;
  }

  async readChunk(key: string, layerStart: number, layerEnd: number): Promise<ChunkSlice | undefined> {
    const slice = await readChunkSlice(this.tiers, key, layerStart, layerEnd);
    if (slice) {
      this.peerCounters.servedChunks++;
      this.peerCounters.servedBytes += slice.payload.byteLength;
    }
    return slice;
  }

  async importChunks(model: string, chunks: readonly ChunkPayload[], advisory?: PrefetchAdvisory): Promise<void> {
    if (!this.tiers.has(model) || chunks.length === 0) return;
    this.peerCounters.importedChunks += chunks.length;
    if (!advisory) {
      await this.writer.write(model, chunks);
      return;
    }
    const m = this.tiers.model(model);
    // Already here (the node's own KV, or an earlier prefetch): nothing to pull in or to purge later.
    const fresh = chunks.filter((c) => m.table.layersIn(c.key, 'mem').length === 0);
    const now = advisory.receivedMs ?? this.tiers.now();
    // To the device first: the request may come while the host copy is being written.
    const staged = new Set(fresh.filter((c) => this.promotion.promote(model, c, advisory, now)).map((c) => c.key));
    await this.writer.write(model, fresh, true);
    const chunksHere = importedChunks(chunks, new Set(fresh.map((c) => c.key)), staged, (key) => m.table.layersIn(key, 'mem'));
    const got = this.prefetched.recordImport(advisory, { model, bytes: m.stride, stamp: now }, chunksHere);
    this.peerCounters.prefetchedChunks += got.chunks;
    this.peerCounters.prefetchedBytes += got.segments * m.segBytes;
  }

  /** An advisory is withdrawn: what it prefetched and nobody used leaves the host pool and the device. Returns the chunks dropped. */
  forget(advisoryId: string): number {
    return withdrawnChunks(this.withdraw(this.prefetched.forget(advisoryId)));
  }

  /** Drops what withdrawn advisories left in the host pool, and unstages their device copies. */
  private withdraw(w: Withdrawal): Withdrawal {
    this.tiers.dropHost(w.drops);
    this.promotion.unstage(w.unstage);
    return w;
  }

  segmentBytes(model: string): number | undefined {
    return this.tiers.has(model) ? this.tiers.model(model).segBytes : undefined;
  }

  geometry(model: string): KvRowGeometry | undefined {
    return this.tiers.has(model) ? this.tiers.model(model).geometry : undefined;
  }

  holdsOnHost(model: string, key: string): boolean {
    return this.tiers.has(model) && this.tiers.model(model).table.holdsChunk(key, 'mem');
  }

  advisoryChunksHeld(model: string, advisoryId: string): number {
    return this.prefetched.heldFor(advisoryId, (key) => this.holdsOnHost(model, key));
  }

  /**
   * Expiry of idle SSD chunks and journal compaction. A pass still running when the timer fires
   * again is joined, not doubled (two compactions would rewrite the journal under each other),
   * and none starts once the store is closing.
   */
  housekeeping(): Promise<void> {
    if (this.closing) return Promise.resolve();
    return (this.housekeepingRun ??= this.housekeepingPass().finally(() => (this.housekeepingRun = undefined)));
  }

  private async housekeepingPass(): Promise<void> {
    try {
      this.withdraw(this.prefetched.expire(this.tiers.now()));
      this.tiers.expire();
      await this.tiers.flushJournals();
      await this.tiers.compactJournals();
    } catch (e) {
      this.log('error', 'KV store housekeeping failed', { err: e instanceof Error ? e : String(e) });
    }
  }

  /** Waits for every write accepted so far to reach its last tier and be journaled. */
  async settle(): Promise<void> {
    this.exports.flush();
    await this.writer.drain();
    await this.tiers.flushJournals();
  }

  async close(): Promise<void> {
    this.closing = true;
    this.unwatch();
    clearInterval(this.timer);
    await this.housekeepingRun;
    await this.warmed.coolAll();
    await this.settle();
    await this.tiers.close();
    await closePoolDevices(this.tiers.devices);
  }

  /**
   * Like a crash, for tests: stops at once without waiting for background writes or syncing
   * the journal beyond what already reached the disk; what a restart finds is what survived.
   */
  async abort(): Promise<void> {
    this.closing = true;
    this.unwatch();
    clearInterval(this.timer);
    await this.housekeepingRun;
    await this.warmed.coolAll();
    this.writer.stop();
    await closePoolDevices(this.tiers.devices);
  }
}
