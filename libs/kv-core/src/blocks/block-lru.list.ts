const NIL = -1;

/**
 * Cached (evictable) block ids, least recently used first: an intrusive doubly linked list over
 * ids in typed arrays, so insert-newest, remove-any and pop-oldest are O(1) with no allocation.
 * Why not a Map's insertion order: removing from the middle is O(1) there too, but popping the
 * oldest needs an iterator per call and the list must also answer "is id listed" by index.
 */
export class BlockLruList {
  private prev = new Int32Array(0);
  private next = new Int32Array(0);
  private listed = new Uint8Array(0);
  private head = NIL;
  private tail = NIL;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /**
   * Resizes the id space to `capacity` ids; callers remove listed ids beyond it first (their
   * `listed` flag is then 0). The arrays only ever grow, doubling, so resizing a cache at its
   * end costs amortized O(blocks touched), not O(capacity) per resize (elastic caches).
   */
  grow(capacity: number): void {
    if (capacity <= this.prev.length) return;
    const size = Math.max(capacity, 2 * this.prev.length);
    const resize = <A extends Int32Array | Uint8Array>(a: A, b: A): A => {
      b.set(a);
      return b;
    };
    this.prev = resize(this.prev, new Int32Array(size));
    this.next = resize(this.next, new Int32Array(size));
    this.listed = resize(this.listed, new Uint8Array(size));
  }

  has(id: number): boolean {
    return this.listed[id] === 1;
  }

  pushNewest(id: number): void {
    if (this.listed[id]) throw new Error(`block ${id} is already cached`);
    this.listed[id] = 1;
    this.prev[id] = this.tail;
    this.next[id] = NIL;
    if (this.tail === NIL) this.head = id;
    else this.next[this.tail] = id;
    this.tail = id;
    this.count++;
  }

  remove(id: number): void {
    if (!this.listed[id]) throw new Error(`block ${id} is not cached`);
    const p = this.prev[id]!;
    const n = this.next[id]!;
    if (p === NIL) this.head = n;
    else this.next[p] = n;
    if (n === NIL) this.tail = p;
    else this.prev[n] = p;
    this.listed[id] = 0;
    this.count--;
  }

  popOldest(): number | undefined {
    if (this.head === NIL) return undefined;
    const id = this.head;
    this.remove(id);
    return id;
  }

  /** Listed ids, oldest first (tests and invariant checks). */
  order(): number[] {
    const out: number[] = [];
    for (let id = this.head; id !== NIL; id = this.next[id]!) out.push(id);
    return out;
  }

  ids(capacity: number): Set<number> {
    const out = new Set(this.order());
    if (out.size !== this.count) throw new Error(`LRU list corrupt: ${out.size} linked, ${this.count} counted`);
    for (const id of out) if (id >= capacity || !this.listed[id]) throw new Error(`LRU list corrupt at ${id}`);
    return out;
  }
}
