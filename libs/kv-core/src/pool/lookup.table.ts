import { isChunkKey } from '../keys/chunk-key.hasher.js';
import { ChunkRecord, compareTtl, Entry, Slot } from './lookup.records.js';
import { OrderedSet } from './ordered.set.js';
import { tierIndex, TIERS_FASTEST_FIRST, type PoolTier, type SegmentLocation, type SegmentRef } from './pool.types.js';
import { TierIndex } from './tier.index.js';
import type { EvictionOptions, LookupTableOptions, PinHandle, PrefixChunk, Removal, Victim } from './lookup.types.js';

class Pin implements PinHandle {
  released = false;
  constructor(readonly entry: Entry) {}
  get chunkKey(): string {
    return this.entry.chunk.key;
  }
  get layer(): number {
    return this.entry.layer;
  }
  get location(): SegmentLocation {
    return this.entry.loc;
  }
}

const MEM = 0;
const SSD = 1;

/**
 * The global lookup table of one node's offload pool (Unified KV pooling Table I), keyed by
 * segment (chunk key, layer), with one replica per tier: the host pool (`mem`) and the SSD pool
 * (`ssd`). Find, get, touch and pin are O(1) (a Map of chunks, an array of layers per tier);
 * put and remove are O(log n) because they file the replica in (or take it out of) its tier's
 * eviction order — the price of choosing each victim in O(log n) instead of scanning; eviction
 * and expiry are O(log n) per segment they return.
 *
 * Invariant (checked by {@link LookupTable.checkInvariant}):
 *   - a chunk's position never changes (its key covers the whole prefix); a record exists
 *     while it holds a replica or a reference;
 *   - `held`/`covered` counts and byte totals match the replicas;
 *   - a pinned replica is never chosen by eviction or expiry and is never freed while pinned:
 *     removing it returns `deferred` and its location comes back from the last unpin;
 *   - the last copy of a referenced chunk is not chosen for eviction unless the caller says
 *     the tier is not the last one, and a referenced chunk never expires;
 *   - eviction index invariants: see {@link TierIndex}; expiry: every unreferenced chunk with
 *     an unpinned-only SSD presence is filed for expiry, under a stamp ≤ its own.
 *
 * Referenced chunks and TTL: a reference is a promise that a session will come back, so a
 * referenced chunk does not expire however long it idles; when its last reference goes it
 * expires by its last access (a reference is not an access). The session layer must drop
 * references of sessions it forgets, or their chunks stay on SSD for good.
 */
export class LookupTable {
  readonly numLayers: number;
  readonly ttlMs: number;
  private readonly chunks = new Map<string, ChunkRecord>();
  private readonly tiers: [TierIndex, TierIndex] = [new TierIndex('mem'), new TierIndex('ssd')];
  private readonly ttl = new OrderedSet<ChunkRecord>(compareTtl);
  private readonly bytes: [number, number] = [0, 0];
  private readonly segments: [number, number] = [0, 0];
  private nextSeq = 0;

  constructor(options: LookupTableOptions) {
    const { numLayers, ttlMs = Infinity } = options;
    if (!Number.isInteger(numLayers) || numLayers <= 0 || numLayers > 0xffff)
      throw new RangeError(`numLayers must be in [1, 65535], got ${numLayers}`);
    if (!(ttlMs > 0)) throw new RangeError(`ttlMs must be > 0, got ${ttlMs}`);
    this.numLayers = numLayers;
    this.ttlMs = ttlMs;
  }

  /** Records a replica of `seg` in `location.type`'s tier; the tier must not already hold it. */
  put(seg: SegmentRef, location: SegmentLocation, nowMs: number): void {
    this.checkSegment(seg.chunkKey, seg.layer);
    checkLocation(location);
    checkStamp(nowMs);
    const t = tierIndex(location.type);
    let rec = this.chunks.get(seg.chunkKey);
    if (rec) {
      if (rec.position !== seg.position) throw new Error(`chunk ${seg.chunkKey} is at position ${rec.position}, not ${seg.position}`);
      if (rec.replicas[t][seg.layer]) throw new Error(`${location.type} already holds ${seg.chunkKey} layer ${seg.layer}`);
    } else {
      if (!Number.isSafeInteger(seg.position) || seg.position < 0) throw new RangeError(`bad chunk position ${seg.position}`);
      rec = this.record(seg.chunkKey, seg.position, nowMs);
    }
    rec.stamp = Math.max(rec.stamp, nowMs);
    const { deviceIndex, type, offset, length, crc32c } = location;
    const e = new Entry(rec, seg.layer, Object.freeze({ deviceIndex, type, offset, length, crc32c }));
    const other = rec.replicas[1 - t]![seg.layer];
    rec.replicas[t][seg.layer] = e;
    rec.held[t]++;
    if (!other) rec.covered++;
    else this.tiers[1 - t]!.release(other);
    this.bytes[t] += length;
    this.segments[t]++;
    this.tiers[t].file(e);
    if (t === SSD) this.fileTtl(rec);
  }

  /** Replicas of a segment, fastest tier first; empty if none. */
  find(chunkKey: string, layer: number): SegmentLocation[] {
    const rec = this.chunks.get(chunkKey);
    if (!rec) return [];
    const out: SegmentLocation[] = [];
    for (const r of rec.replicas) {
      const e = r[layer];
      if (e) out.push(e.loc);
    }
    return out;
  }

  get(chunkKey: string, layer: number, tier: PoolTier): SegmentLocation | undefined {
    return this.chunks.get(chunkKey)?.replicas[tierIndex(tier)][layer]?.loc;
  }

  /**
   * Takes a replica out of the table. Null if the tier does not hold it. A pinned replica is
   * removed from view at once (no new reader finds it) but comes back `deferred`: its space
   * is in use until the last {@link unpin}, which returns the location to free.
   */
  remove(chunkKey: string, layer: number, tier: PoolTier): Removal | null {
    const t = tierIndex(tier);
    const rec = this.chunks.get(chunkKey);
    const e = rec?.replicas[t][layer];
    if (!rec || !e) return null;
    this.tiers[t].unfile(e);
    rec.replicas[t][layer] = undefined;
    rec.held[t]--;
    if (!rec.replicas[1 - t]![layer]) rec.covered--;
    this.bytes[t] -= e.loc.length;
    this.segments[t]--;
    if (e.pins > 0) {
      e.removed = true;
      if (t === SSD) rec.pinnedSsd--;
    }
    if (t === SSD) {
      // Removing the last pinned SSD replica may leave an unpinned-only presence to file.
      if (rec.held[SSD] === 0) this.unfileTtl(rec);
      else this.fileTtl(rec);
    }
    if (rec.isEmpty()) this.chunks.delete(chunkKey);
    return { chunkKey, layer, tier, location: e.loc, deferred: e.removed };
  }

  /** Removes every replica of a chunk in every tier (e.g. a session delete with no other refs). */
  removeChunk(chunkKey: string): Removal[] {
    const out: Removal[] = [];
    for (const tier of TIERS_FASTEST_FIRST)
      for (let l = 0; l < this.numLayers; l++) {
        const r = this.remove(chunkKey, l, tier);
        if (r) out.push(r);
      }
    return out;
  }

  /** Layers of a chunk the tier holds, ascending. */
  layersIn(chunkKey: string, tier: PoolTier): number[] {
    const r = this.chunks.get(chunkKey)?.replicas[tierIndex(tier)];
    const out: number[] = [];
    if (r) for (let l = 0; l < this.numLayers; l++) if (r[l]) out.push(l);
    return out;
  }

  /** Whether the tier holds every layer of the chunk. O(1). */
  holdsChunk(chunkKey: string, tier: PoolTier): boolean {
    return this.chunks.get(chunkKey)?.held[tierIndex(tier)] === this.numLayers;
  }

  /**
   * The longest cached prefix of a chain of chunk keys (key i at position i): per chunk in
   * order, where each layer can be read from. Stops at the first chunk some layer of which no
   * tier holds. O(1) per chunk to decide, plus the copies of its two layer arrays.
   */
  longestPrefix(chunkKeys: readonly string[]): PrefixChunk[] {
    const out: PrefixChunk[] = [];
    for (const key of chunkKeys) {
      const rec = this.chunks.get(key);
      if (!rec || rec.covered < this.numLayers) break;
      out.push({ chunkKey: key, position: rec.position, mem: rec.replicas[MEM].map(locOf), ssd: rec.replicas[SSD].map(locOf) });
    }
    return out;
  }

  /** Stamps every known chunk of a request with its access time (one stamp per request). O(1) each. */
  touch(chunkKeys: readonly string[], nowMs: number): void {
    checkStamp(nowMs);
    for (const key of chunkKeys) {
      const rec = this.chunks.get(key);
      if (rec && nowMs > rec.stamp) rec.stamp = nowMs;
    }
  }

  /** Chain position of a known chunk (one with a replica or a reference). */
  positionOf(chunkKey: string): number | undefined {
    return this.chunks.get(chunkKey)?.position;
  }

  lastAccess(chunkKey: string): number | undefined {
    return this.chunks.get(chunkKey)?.stamp;
  }

  /** One more owner (session) of a chunk; the record is created if the chunk is not cached yet. */
  ref(chunkKey: string, position: number): number {
    this.checkSegment(chunkKey, 0);
    let rec = this.chunks.get(chunkKey);
    if (rec && rec.position !== position) throw new Error(`chunk ${chunkKey} is at position ${rec.position}, not ${position}`);
    if (!rec) {
      if (!Number.isSafeInteger(position) || position < 0) throw new RangeError(`bad chunk position ${position}`);
      rec = this.record(chunkKey, position, 0);
    }
    return ++rec.refs;
  }

  /** Drops one owner; at zero the chunk becomes evictable from its last tier and expirable. */
  unref(chunkKey: string): number {
    const rec = this.chunks.get(chunkKey);
    if (!rec || rec.refs === 0) throw new Error(`unref of unreferenced chunk ${chunkKey}`);
    if (--rec.refs > 0) return rec.refs;
    for (let t = 0; t < 2; t++) for (const e of rec.replicas[t]!) if (e && e.slot === Slot.Guarded) this.tiers[t]!.release(e);
    if (rec.held[SSD] > 0) this.fileTtl(rec);
    if (rec.isEmpty()) this.chunks.delete(chunkKey);
    return 0;
  }

  refCount(chunkKey: string): number {
    return this.chunks.get(chunkKey)?.refs ?? 0;
  }

  /** Pins a replica for an in-flight read or write; null if the tier does not hold it. O(1). */
  pin(chunkKey: string, layer: number, tier: PoolTier): PinHandle | null {
    const t = tierIndex(tier);
    const e = this.chunks.get(chunkKey)?.replicas[t][layer];
    if (!e) return null;
    if (e.pins++ === 0 && t === SSD) e.chunk.pinnedSsd++;
    return new Pin(e);
  }

  /**
   * Releases a pin. Returns the location to free if the replica was removed while pinned and
   * this was its last pin; otherwise null. A handle released twice is a broken invariant.
   */
  unpin(handle: PinHandle): SegmentLocation | null {
    if (!(handle instanceof Pin)) throw new TypeError('not a pin handle of this table');
    if (handle.released) throw new Error(`pin on ${handle.chunkKey} layer ${handle.layer} released twice`);
    handle.released = true;
    const e = handle.entry;
    if (--e.pins > 0) return null;
    if (e.removed) return e.loc;
    const t = tierIndex(e.loc.type);
    if (e.slot === Slot.None) this.tiers[t].file(e);
    if (t === SSD && --e.chunk.pinnedSsd === 0) this.fileTtl(e.chunk);
    return null;
  }

  /**
   * Segments to evict from `tier` to free `bytesNeeded` (by payload length), first victim
   * first: least recently used request, its later layers, then its later chunks (see
   * compareEvictionOrder). Never a pinned segment, nor the last copy of a referenced chunk
   * unless `lastTier: false`. Fewer bytes than asked if that is all there is. Does not remove.
   */
  chooseVictims(tier: PoolTier, bytesNeeded: number, options: EvictionOptions = {}): Victim[] {
    if (!(bytesNeeded >= 0)) throw new RangeError(`bytesNeeded must be ≥ 0, got ${bytesNeeded}`);
    const chosen = this.tiers[tierIndex(tier)].choose(bytesNeeded, options.lastTier ?? true);
    return chosen.map((e) => ({ chunkKey: e.chunk.key, position: e.chunk.position, layer: e.layer, tier, location: e.loc }));
  }

  /** {@link chooseVictims}, then removes them; free each returned location. */
  evict(tier: PoolTier, bytesNeeded: number, options: EvictionOptions = {}): Removal[] {
    return this.chooseVictims(tier, bytesNeeded, options).map((v) => this.remove(v.chunkKey, v.layer, tier)!);
  }

  /**
   * Removes and returns the SSD replicas of chunks whose last access is older than the TTL
   * (`stamp < nowMs − ttlMs`). Referenced chunks and pinned replicas stay. O(log n) per
   * expired chunk plus O(1) per segment removed.
   */
  expire(nowMs: number): Removal[] {
    checkStamp(nowMs);
    const out: Removal[] = [];
    const cutoff = nowMs - this.ttlMs;
    for (let rec = this.ttl.first(); rec && rec.ttlStamp < cutoff; rec = this.ttl.first()) {
      this.unfileTtl(rec);
      if (rec.ttlStamp < rec.stamp) {
        this.fileTtl(rec);
        continue;
      }
      if (rec.refs > 0) continue; // unref files it again
      for (let l = 0; l < this.numLayers; l++) {
        const e = rec.replicas[SSD][l];
        if (e && e.pins === 0) out.push(this.remove(rec.key, l, 'ssd')!);
      }
      // Pinned replicas left behind are filed again by their last unpin.
    }
    return out;
  }

  /** Every replica in a tier, for compaction and reports. O(n). */
  *entries(tier: PoolTier): IterableIterator<SegmentRef & { location: SegmentLocation; stampMs: number }> {
    const t = tierIndex(tier);
    for (const rec of this.chunks.values()) {
      for (let l = 0; l < this.numLayers; l++) {
        const e = rec.replicas[t][l];
        if (e) yield { chunkKey: rec.key, position: rec.position, layer: l, location: e.loc, stampMs: rec.stamp };
      }
    }
  }

  stats(tier: PoolTier): { segments: number; bytes: number } {
    const t = tierIndex(tier);
    return { segments: this.segments[t], bytes: this.bytes[t] };
  }

  get chunkCount(): number {
    return this.chunks.size;
  }

  /** Verifies every invariant in the class docstring; O(n). For tests and debug checks. */
  checkInvariant(): void {
    const filed: [number, number] = [0, 0];
    const bytes: [number, number] = [0, 0];
    const segs: [number, number] = [0, 0];
    let ttlFiled = 0;
    for (const [key, rec] of this.chunks) {
      if (rec.key !== key) throw new Error(`record under ${key} is ${rec.key}`);
      if (rec.isEmpty()) throw new Error(`empty record ${key} kept`);
      let covered = 0;
      let pinnedSsd = 0;
      for (let l = 0; l < this.numLayers; l++) {
        if (rec.replicas[MEM][l] || rec.replicas[SSD][l]) covered++;
        for (let t = 0; t < 2; t++) {
          const e = rec.replicas[t]![l];
          if (!e) continue;
          const idx = this.tiers[t]!;
          if (e.chunk !== rec || e.layer !== l || e.removed || tierIndex(e.loc.type) !== t) throw new Error(`entry ${key}/${l} misfiled`);
          if (e.stamp > rec.stamp) throw new Error(`entry ${key}/${l} filed ahead of its chunk's stamp`);
          if (e.pins === 0 && e.slot === Slot.None) throw new Error(`unpinned entry ${key}/${l} not filed for eviction`);
          if (e.slot === Slot.Open && !idx.open.has(e)) throw new Error(`entry ${key}/${l} missing from open`);
          if (e.slot === Slot.Guarded && (!idx.guarded.has(e) || !idx.isGuarded(e))) throw new Error(`entry ${key}/${l} wrongly guarded`);
          if (e.slot !== Slot.None) filed[t]!++;
          if (t === SSD && e.pins > 0) pinnedSsd++;
          bytes[t]! += e.loc.length;
          segs[t]!++;
        }
      }
      const held = [0, 1].map((t) => rec.replicas[t]!.filter((e) => e).length);
      if (held[0] !== rec.held[0] || held[1] !== rec.held[1] || covered !== rec.covered) throw new Error(`counts of ${key} are off`);
      if (pinnedSsd !== rec.pinnedSsd) throw new Error(`pinned SSD count of ${key} is off`);
      if (rec.inTtl !== this.ttl.has(rec)) throw new Error(`expiry filing of ${key} is off`);
      if (rec.inTtl && (rec.held[SSD] === 0 || rec.ttlStamp > rec.stamp)) throw new Error(`${key} filed for expiry wrongly`);
      if (!rec.inTtl && rec.held[SSD] > 0 && rec.refs === 0 && rec.pinnedSsd === 0) throw new Error(`${key} not filed for expiry`);
      if (rec.inTtl) ttlFiled++;
    }
    for (let t = 0; t < 2; t++) {
      const idx = this.tiers[t]!;
      idx.open.checkInvariant();
      idx.guarded.checkInvariant();
      if (idx.open.size + idx.guarded.size !== filed[t]) throw new Error(`${idx.tier} eviction sets hold removed entries`);
      if (bytes[t] !== this.bytes[t] || segs[t] !== this.segments[t]) throw new Error(`${idx.tier} totals are off`);
    }
    this.ttl.checkInvariant();
    if (ttlFiled !== this.ttl.size) throw new Error('expiry set holds unknown chunks');
  }

  private record(key: string, position: number, stamp: number): ChunkRecord {
    const rec = new ChunkRecord(key, position, this.nextSeq++, this.numLayers, stamp);
    this.chunks.set(key, rec);
    return rec;
  }

  private fileTtl(rec: ChunkRecord): void {
    if (rec.inTtl || rec.refs > 0 || rec.held[SSD] === 0 || rec.pinnedSsd > 0) return;
    rec.ttlStamp = rec.stamp;
    this.ttl.insert(rec);
    rec.inTtl = true;
  }

  private unfileTtl(rec: ChunkRecord): void {
    if (!rec.inTtl) return;
    this.ttl.delete(rec);
    rec.inTtl = false;
  }

  private checkSegment(chunkKey: string, layer: number): void {
    if (!isChunkKey(chunkKey)) throw new RangeError(`not a chunk key: ${String(chunkKey)}`);
    if (!Number.isInteger(layer) || layer < 0 || layer >= this.numLayers)
      throw new RangeError(`layer must be in [0, ${this.numLayers}), got ${layer}`);
  }
}

const locOf = (e: Entry | undefined): SegmentLocation | undefined => e?.loc;

function checkLocation(l: SegmentLocation): void {
  tierIndex(l.type);
  if (!Number.isInteger(l.deviceIndex) || l.deviceIndex < 0 || l.deviceIndex > 0xffff)
    throw new RangeError(`bad device index ${l.deviceIndex}`);
  if (!Number.isSafeInteger(l.offset) || l.offset < 0) throw new RangeError(`bad offset ${l.offset}`);
  if (!Number.isInteger(l.length) || l.length <= 0 || l.length > 0xffffffff) throw new RangeError(`bad length ${l.length}`);
  if (!Number.isInteger(l.crc32c) || l.crc32c < 0 || l.crc32c > 0xffffffff) throw new RangeError(`bad crc32c ${l.crc32c}`);
}

function checkStamp(ms: number): void {
  if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`stamp must be a finite time ≥ 0 in ms, got ${ms}`);
}
