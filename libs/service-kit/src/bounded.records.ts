/**
 * Records kept for a while, bounded by count and age: `set` past `maxCount` forgets the oldest
 * record, `get` does not return one older than `ttlMs` (and forgets it). Insertion order is age
 * order (a `set` of an existing key moves it to the end), so both bounds cost O(1) per call.
 * For diagnostics that must never grow with traffic (the `why` records of requests and chunks).
 */
export class BoundedRecords<K, V> {
  private readonly items = new Map<K, { at: number; value: V }>();

  constructor(
    readonly maxCount: number,
    readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {
    if (!Number.isInteger(maxCount) || maxCount < 1) throw new RangeError(`maxCount must be a positive integer, got ${maxCount}`);
    if (!(ttlMs > 0)) throw new RangeError(`ttlMs must be positive, got ${ttlMs}`);
  }

  set(key: K, value: V): void {
    this.items.delete(key);
    this.items.set(key, { at: this.now(), value });
    this.sweep();
    while (this.items.size > this.maxCount) this.items.delete(this.items.keys().next().value as K);
  }

  get(key: K): V | undefined {
    const e = this.items.get(key);
    if (!e) return undefined;
    if (this.now() - e.at > this.ttlMs) {
      this.items.delete(key);
      return undefined;
    }
    return e.value;
  }

  get size(): number {
    return this.items.size;
  }

  /** Forgets expired records from the oldest end. */
  private sweep(): void {
    const limit = this.now() - this.ttlMs;
    for (const [k, e] of this.items) {
      if (e.at >= limit) break;
      this.items.delete(k);
    }
  }
}
