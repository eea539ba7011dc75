import { OrderedSet } from './ordered.set.js';

/**
 * What eviction orders by. `stamp` is the last access (ms); every chunk a request touches
 * gets that request's stamp, so "least recently used request" is "smallest stamp".
 * `position` is the chunk's index in its key chain.
 */
export interface EvictionKey {
  readonly stamp: number;
  readonly layer: number;
  readonly position: number;
}

/**
 * The victim order, first victim first: least recently used request, then its later layers
 * before earlier ones, then its later chunks before earlier ones.
 *
 * Symphony §3.4: "under memory pressure, remove the last layer of KV cache associated with
 * the least recently used request" — a layer-wise load starts computing as soon as the early
 * layers are in, so late layers are the cheapest to be missing. Later chunks go before earlier
 * ones at the same layer because a chunk is useless without every chunk before it (the longest
 * cached prefix stops at the first gap).
 */
export function compareEvictionOrder(a: EvictionKey, b: EvictionKey): number {
  return a.stamp - b.stamp || b.layer - a.layer || b.position - a.position;
}

/**
 * How much an advisory's prefetched data is wanted: its `priority` (higher is kept longer) and
 * `dueMs`, when its request is expected (sooner is kept longer). Symphony advisories carry no
 * size and often no timing: a chat advisory may say nothing but the session, an agent's may say
 * its request comes after those advised before it (`ordered`), or when it is expected.
 */
export interface PrefetchUrgency {
  readonly priority: number;
  readonly dueMs: number;
}

/**
 * `dueMs` of an advisory: its expected arrival when it gave one; an ordered one is due in the
 * order advisories were received (the later advised, the later due); one with neither is due
 * at an unknown time, after every advisory that said something about its timing.
 */
export function advisoryDueMs(a: { readonly expectedArrivalMs: number; readonly ordered: boolean; readonly receivedMs: number }): number {
  if (a.expectedArrivalMs > 0) return a.expectedArrivalMs;
  return a.ordered ? a.receivedMs : Infinity;
}

/** The urgency of data several advisories want: the most urgent of them. */
export function mostUrgent(a: PrefetchUrgency, b: PrefetchUrgency): PrefetchUrgency {
  return { priority: Math.max(a.priority, b.priority), dueMs: Math.min(a.dueMs, b.dueMs) };
}

const order = (x: number, y: number): number => (x < y ? -1 : x > y ? 1 : 0);

/**
 * Purge order of prefetched data, first victim first: lowest advisory priority, then the
 * request due last, then {@link compareEvictionOrder} (later layers of the least recently used first).
 */
export function comparePrefetchPurge(a: EvictionKey & PrefetchUrgency, b: EvictionKey & PrefetchUrgency): number {
  return order(a.priority, b.priority) || order(b.dueMs, a.dueMs) || compareEvictionOrder(a, b);
}

/**
 * Cooperative purge of device-resident prefetched data (Symphony §3.4, ARCHITECTURE
 * "Cooperative memory"): when the engine needs device blocks, prefetched data of requests
 * that are not running is dropped without copy-back — in {@link compareEvictionOrder} order.
 * The caller adds an item per unit it can drop (e.g. one layer of one prefetched chunk).
 *
 * Invariant: an item's key fields do not change while it is queued (remove, change, add —
 * e.g. when its session is touched). Items comparing equal are kept in insertion order.
 * add/remove O(log n); choose/take O(log n) per item returned.
 */
export class PurgeQueue<T extends EvictionKey & { readonly bytes: number }> {
  private readonly seqOf = new Map<T, number>();
  private next = 0;
  private readonly order: OrderedSet<T>;

  /** `compare`: the victim order (default {@link compareEvictionOrder}; {@link comparePrefetchPurge} for advisory data). */
  constructor(compare: (a: T, b: T) => number = compareEvictionOrder) {
    this.order = new OrderedSet<T>((a, b) => compare(a, b) || this.seqOf.get(a)! - this.seqOf.get(b)!);
  }

  get size(): number {
    return this.seqOf.size;
  }

  add(item: T): void {
    if (this.seqOf.has(item)) throw new Error('item already queued for purge');
    if (!Number.isFinite(item.stamp) || !Number.isInteger(item.layer) || !Number.isInteger(item.position)) {
      throw new RangeError('purge item needs a finite stamp and integer layer and position');
    }
    this.seqOf.set(item, this.next++);
    this.order.insert(item);
  }

  /** Drops `item` from the queue (it started running, or was purged another way). */
  remove(item: T): boolean {
    if (!this.seqOf.has(item)) return false;
    this.order.delete(item);
    this.seqOf.delete(item);
    return true;
  }

  /** The shortest head of the purge order whose bytes reach `bytesNeeded` (all items if they do not). */
  choose(bytesNeeded: number): T[] {
    if (!(bytesNeeded >= 0)) throw new RangeError(`bytesNeeded must be ≥ 0, got ${bytesNeeded}`);
    const out: T[] = [];
    let got = 0;
    for (let it = this.order.first(); it && got < bytesNeeded; it = this.order.higher(it)) {
      out.push(it);
      got += it.bytes;
    }
    return out;
  }

  /** {@link choose}, then removes what it chose. */
  take(bytesNeeded: number): T[] {
    const out = this.choose(bytesNeeded);
    for (const it of out) this.remove(it);
    return out;
  }
}
