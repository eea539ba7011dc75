import { DeviceBlockStates } from './device-block.states.js';
import type { StageRank } from './staged-chunk.set.js';

export type { BlockEvictionListener, BlockGroupOptions, DeviceBlockCounts, StagedPurgeListener } from './device-block.types.js';

/**
 * The device block manager of one model's paged KV cache: physical block ids
 * `0 … capacity-1`, each in exactly one state —
 *
 *   free   refCount 0, no key, in the free stack;
 *   cached refCount 0, a content key, in the LRU list (a finished sequence's block, kept so a
 *          later request with the same prefix finds it: vLLM-style automatic prefix caching);
 *   staged refCount 0, no key, part of one prefetched chunk placed here before any request
 *          asked for it (Symphony's promotion to the device; {@link stage}). A sequence whose
 *          prompt reaches that chunk's key takes it over ({@link takeStaged}); otherwise it is
 *          the first thing reclaimed when blocks are needed, without copy-back (the host keeps
 *          or can fetch a copy);
 *   active refCount ≥ 1 (the sequences holding it), with or without a key.
 *
 * Keys name a block's content *and* everything before it (chained hashes, see `blockKeys`), so a
 * key match is a prefix match. Only full blocks whose KV has been written get keys ({@link commit});
 * `byKey` maps each key to its one block. {@link allocate} takes free blocks first, then purges
 * staged chunks in prefetch purge order, then evicts cached blocks oldest first, so neither costs
 * anything when memory is needed: "available" = free + staged + cached. Every operation is O(1)
 * per block touched (the LRU is an intrusive doubly linked list over ids, the free set a stack
 * with positions), except {@link checkInvariant}, and {@link shrink} over staged chunks.
 *
 * Grouped mode (constructed with {@link BlockGroupOptions}; FastSwitch §3.1) partitions the free
 * blocks into free runs and owners' group tails ({@link GroupedFreeIds}); {@link allocateFor}
 * hands an owner the next ids of its group; only {@link shrink} walks the run it cuts.
 *
 * Everything that uses device KV memory goes through this one manager: prefix sharing (here),
 * elastic growth and shrink at the end of the id space ({@link grow}/{@link shrink}), block groups
 * for cheap swaps, and — built on the same states — purge order for prefetched blocks. "No space"
 * returns null; only a broken invariant (double release, acquiring a free block, unknown id)
 * throws, before anything changes.
 */
export class DeviceBlockManager extends DeviceBlockStates {
  private maxCached = Infinity;

  /**
   * Places a prefetched chunk `key` in `n` free blocks — never cached or staged ones, and in
   * grouped mode never another owner's group tail: promotion uses memory nobody else would — and
   * returns them for the caller to write its KV into (before anything else can allocate). Null,
   * taking nothing, when the key is on the device already (staged, or a block holds it) or fewer
   * than `n` such blocks are free.
   */
  stage(key: string, n: number, rank: StageRank): number[] | null {
    if (!Number.isInteger(n) || n < 1) throw new RangeError(`stage block count must be a positive integer, got ${n}`);
    if (this.staged.has(key) || this.byKey.has(key)) return null;
    let ids: number[] | null;
    if (this.grouping) {
      ids = this.grouping.takeUnreserved(n);
      if (!ids) return null;
      for (const id of ids) this.free.remove(id);
    } else {
      if (this.free.size < n) return null;
      ids = [];
      for (let i = 0; i < n; i++) ids.push(this.free.pop()!);
    }
    this.staged.add(key, ids, rank);
    return ids;
  }

  /** Blocks of a staged chunk, if it is staged. */
  stagedIds(key: string): readonly number[] | undefined {
    return this.staged.ids(key);
  }

  /** Drops a staged chunk (its advisory was withdrawn): its blocks are free again. False when it was not staged. */
  unstage(key: string): boolean {
    const ids = this.staged.remove(key);
    if (!ids) return false;
    for (const id of ids) this.pushFree(id);
    return true;
  }

  /**
   * A sequence takes over blocks [from, to) of staged chunk `key`: they get one holder each
   * (unnamed, as fresh ones; the caller commits their keys) and are returned. The chunk's other
   * blocks are free again: those before `from` the device held already, those from `to` on hold
   * nothing (a partial chunk's) or nothing the sequence reaches.
   */
  takeStaged(key: string, from = 0, to?: number): number[] {
    const ids = this.staged.ids(key);
    if (!ids) throw new Error(`chunk ${key} is not staged`);
    const end = to ?? ids.length;
    if (!Number.isInteger(from) || !Number.isInteger(end) || from < 0 || end <= from || end > ids.length)
      throw new RangeError(`staged chunk of ${ids.length} blocks has no blocks [${from}, ${end})`);
    this.staged.remove(key);
    const out = ids.slice(from, end);
    for (const id of [...ids.slice(0, from), ...ids.slice(end)]) this.pushFree(id);
    for (const id of out) this.refs[id] = 1;
    return out;
  }

  /** Purges the first staged chunk in purge order (its blocks go free); false when none is staged. */
  private purgeStaged(): boolean {
    const key = this.staged.victim();
    if (key === undefined) return false;
    this.unstage(key);
    this.onPurgeStaged?.(key);
    return true;
  }

  /** Adds one holder to each block (cached ones become active again). */
  acquire(ids: readonly number[]): void {
    for (const id of ids) {
      this.assertKnown(id);
      if (this.refs[id] === 0 && this.keys[id] === undefined) throw new Error(`acquire of free block ${id}`);
    }
    for (const id of ids) {
      if (this.refs[id] === 0) this.lru.remove(id);
      this.refs[id]!++;
    }
  }

  /**
   * `n` blocks with one holder each: free ones first, then cached ones least recently used first
   * (their keys are dropped and the listener told). Null — and nothing taken — when fewer than
   * `n` are available.
   */
  allocate(n: number): number[] | null {
    if (!Number.isInteger(n) || n < 0) throw new RangeError(`block count must be a non-negative integer, got ${n}`);
    if (n > this.numAvailable) return null;
    if (this.grouping) {
      // No owner to reserve a tail for: one contiguous run, its leftover returned at once.
      const out = this.allocateFor(ANONYMOUS, n);
      this.closeGroup(ANONYMOUS);
      return out;
    }
    const out = new Array<number>(n);
    const evicted: Array<[string, number]> = [];
    for (let i = 0; i < n; i++) {
      let id = this.free.pop();
      // Prefetched chunks go before cached ones (cooperative memory): they are copies kept elsewhere.
      while (id === undefined && this.purgeStaged()) id = this.free.pop();
      if (id === undefined) {
        id = this.lru.popOldest()!;
        evicted.push([this.dropKey(id), id]);
      }
      this.refs[id] = 1;
      out[i] = id;
    }
    for (const [key, id] of evicted) this.onEvict?.(key, id);
    return out;
  }

  /**
   * As {@link allocate}, for one owner (a sequence): in grouped mode each block is the next id
   * of the owner's group, a used-up group followed by a new one ({@link GroupedFreeIds.open}),
   * else by purged staged and evicted cached blocks. Without groups it is {@link allocate}.
   */
  allocateFor(owner: string, n: number): number[] | null {
    const grouping = this.grouping;
    if (!grouping) return this.allocate(n);
    if (!Number.isInteger(n) || n < 0) throw new RangeError(`block count must be a non-negative integer, got ${n}`);
    if (n > this.numAvailable) return null;
    const out: number[] = [];
    const evicted: Array<[string, number]> = [];
    while (out.length < n) {
      const next = grouping.next(owner);
      if (next !== undefined) {
        this.free.remove(next);
        this.refs[next] = 1;
        out.push(next);
        continue;
      }
      if (grouping.open(owner, n - out.length) || this.purgeStaged()) continue;
      // Every free id is reserved by nobody else and we have no tail: only cached blocks remain.
      const id = this.lru.popOldest()!;
      evicted.push([this.dropKey(id), id]);
      this.refs[id] = 1;
      out.push(id);
    }
    for (const [key, id] of evicted) this.onEvict?.(key, id);
    return out;
  }

  /** Returns the unused tail of the owner's group to the free runs (the owner is done or preempted). */
  closeGroup(owner: string): void {
    this.grouping?.close(owner);
  }

  /** The owner's current group as `[start, next, end)`, if it has one (tests, swap planning). */
  groupOf(owner: string): { start: number; next: number; end: number } | undefined {
    const g = this.grouping?.groups.get(owner);
    return g && { start: g.start, next: g.next, end: g.end };
  }

  /**
   * Keeps at most `n` cached (unreferenced, named) blocks: beyond that the oldest are evicted as
   * they are released. Bounds what the device keeps for reuse without taking memory from running
   * sequences (Infinity, the default: cached blocks stay until the space is needed).
   */
  setMaxCached(n: number): void {
    if (n !== Infinity && (!Number.isInteger(n) || n < 0))
      throw new RangeError(`max cached blocks must be a non-negative integer or Infinity, got ${n}`);
    this.maxCached = n;
    if (this.lru.size > n) this.evict(this.lru.size - n);
  }

  /**
   * Drops one holder from each id (an id may repeat: one holder each). A block left with none
   * is cached, most recently used, when it has a key, and free otherwise.
   */
  release(ids: readonly number[]): void {
    const drops = new Map<number, number>();
    for (const id of ids) {
      this.assertKnown(id);
      const d = (drops.get(id) ?? 0) + 1;
      if (d > this.refs[id]!) throw new Error(`double release of block ${id}`);
      drops.set(id, d);
    }
    for (const [id, d] of drops) {
      this.refs[id]! -= d;
      if (this.refs[id] !== 0) continue;
      if (this.keys[id] !== undefined) this.lru.pushNewest(id);
      else this.pushFree(id);
    }
    if (this.lru.size > this.maxCached) this.evict(this.lru.size - this.maxCached);
  }

  /**
   * Names the content of an active, full, written block so later sequences can share it.
   * False (and the block stays unnamed, freed when released) when another block already holds
   * that content — two sequences computed the same prefix at once; the first one is kept.
   */
  commit(id: number, key: string): boolean {
    this.assertKnown(id);
    if (this.refs[id] === 0) throw new Error(`commit of block ${id} that no sequence holds`);
    const current = this.keys[id];
    if (current !== undefined) {
      if (current !== key) throw new Error(`block ${id} already holds ${current}, not ${key}`);
      return true;
    }
    if (this.byKey.has(key)) return false;
    this.keys[id] = key;
    this.byKey.set(key, id);
    return true;
  }

  /** Reclaims up to `n` cached blocks, oldest first (an explicit purge); returns how many. */
  evict(n: number): number {
    if (!Number.isInteger(n) || n < 0) throw new RangeError(`evict count must be a non-negative integer, got ${n}`);
    let done = 0;
    for (; done < n && this.lru.size > 0; done++) {
      const id = this.lru.popOldest()!;
      const key = this.dropKey(id);
      this.pushFree(id);
      this.onEvict?.(key, id);
    }
    return done;
  }

  /**
   * Removes the highest `n` ids (the cache shrinks at its end), evicting cached blocks there.
   * False, changing nothing, when any of them is active: its holder must move first.
   */
  shrink(n: number): boolean {
    if (!Number.isInteger(n) || n < 0 || n > this.refs.length) throw new RangeError(`cannot shrink by ${n}`);
    const first = this.refs.length - n;
    for (let id = first; id < this.refs.length; id++) if (this.refs[id] !== 0) return false;
    // A staged chunk reaching into the cut is dropped whole: a chunk is useful only complete.
    for (const key of this.staged.keysIn(first, this.refs.length)) {
      this.unstage(key);
      this.onPurgeStaged?.(key);
    }
    this.grouping?.shrink(first);
    const evicted: Array<[string, number]> = [];
    for (let id = first; id < this.refs.length; id++) {
      if (this.keys[id] !== undefined) {
        this.lru.remove(id);
        evicted.push([this.dropKey(id), id]);
      } else this.free.remove(id);
    }
    this.refs.length = this.keys.length = first;
    this.lru.grow(first);
    this.free.grow(first);
    for (const [key, id] of evicted) this.onEvict?.(key, id);
    return true;
  }
}

/** Owner of a one-off allocation in grouped mode; a NUL cannot appear in a sequence id we issue. */
const ANONYMOUS = '\0anonymous';
