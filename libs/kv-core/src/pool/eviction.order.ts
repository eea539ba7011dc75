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
  private readonly order = new OrderedSet<T>((a, b) => compareEvictionOrder(a, b) || this.seqOf.get(a)! - this.seqOf.get(b)!);

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
