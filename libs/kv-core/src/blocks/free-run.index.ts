/**
 * Free block ids that no block group reserves, kept as maximal runs of consecutive ids
 * (boundary tags: `endOf[start]`, `startOf[end - 1]`) filed by size order ⌊log2(len)⌋, so a
 * released range merges with its neighbours in O(1) and {@link take} finds a run of at least
 * `want` ids in O(orders) — the buddy allocator's split/merge without its power-of-two sizes.
 * Invariant: every listed id lies in exactly one run; runs never touch (they would be one).
 */
export class FreeRunIndex {
  private listed = new Uint8Array(0);
  private endOf = new Int32Array(0);
  private startOf = new Int32Array(0);
  private readonly orders: Array<Set<number>> = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  get capacity(): number {
    return this.listed.length;
  }

  has(id: number): boolean {
    return this.listed[id] === 1;
  }

  /** Resizes the id space; ids at or past `capacity` must have been removed first. */
  resize(capacity: number): void {
    const grow = <A extends Int32Array | Uint8Array>(a: A, b: A): A => (b.set(a.subarray(0, Math.min(a.length, capacity))), b);
    this.listed = grow(this.listed, new Uint8Array(capacity));
    this.endOf = grow(this.endOf, new Int32Array(capacity));
    this.startOf = grow(this.startOf, new Int32Array(capacity));
  }

  /** Lists `[start, end)` (none of it listed yet), merged with the runs on either side. */
  addRange(start: number, end: number): void {
    if (start >= end) return;
    for (let id = start; id < end; id++) {
      if (this.listed[id] === 1) throw new Error(`block ${id} is already in a free run`);
      this.listed[id] = 1;
    }
    this.count += end - start;
    if (start > 0 && this.listed[start - 1] === 1) {
      const s = this.startOf[start - 1]!;
      this.unfile(s, start);
      start = s;
    }
    if (end < this.listed.length && this.listed[end] === 1) {
      const e = this.endOf[end]!;
      this.unfile(end, e);
      end = e;
    }
    this.file(start, end);
  }

  /**
   * Takes the first `want` ids of a run at least that long (the smallest order that surely
   * fits), or the whole of the longest run when none is; the rest of the run stays listed.
   * Null when nothing is listed.
   */
  take(want: number): { start: number; end: number } | null {
    if (this.count === 0 || want <= 0) return null;
    let start = -1;
    for (let o = Math.ceil(Math.log2(want)); o < this.orders.length && start < 0; o++) {
      const first = this.orders[o]?.values().next();
      if (first && !first.done) start = first.value;
    }
    if (start < 0) {
      for (let o = Math.min(this.orders.length - 1, Math.ceil(Math.log2(want))); o >= 0 && start < 0; o--) {
        for (const s of this.orders[o] ?? []) if (start < 0 || this.endOf[s]! - s > this.endOf[start]! - start) start = s;
      }
    }
    const runEnd = this.endOf[start]!;
    const end = Math.min(runEnd, start + want);
    this.unfile(start, runEnd);
    if (end < runEnd) this.file(end, runEnd);
    for (let id = start; id < end; id++) this.listed[id] = 0;
    this.count -= end - start;
    return { start, end };
  }

  /** Unlists one id, splitting its run. O(length of the run left of it): rare paths only (shrink). */
  remove(id: number): void {
    if (this.listed[id] !== 1) throw new Error(`block ${id} is not in a free run`);
    let s = id;
    while (s > 0 && this.listed[s - 1] === 1) s--;
    const e = this.endOf[s]!;
    this.unfile(s, e);
    this.listed[id] = 0;
    this.count--;
    if (s < id) this.file(s, id);
    if (id + 1 < e) this.file(id + 1, e);
  }

  /** Unlists every id at or past `capacity` (the id space is about to shrink). O(ids past the run before it). */
  truncate(capacity: number): void {
    if (capacity >= this.listed.length) return;
    let s = capacity;
    while (s > 0 && this.listed[s - 1] === 1 && this.listed[capacity] === 1) s--;
    for (let id = s; id < this.listed.length;) {
      if (this.listed[id] !== 1) {
        id++;
        continue;
      }
      const e = this.endOf[id]!;
      this.unfile(id, e);
      id = e;
    }
    for (let id = capacity; id < this.listed.length; id++) {
      if (this.listed[id] !== 1) continue;
      this.listed[id] = 0;
      this.count--;
    }
    if (s < capacity) this.file(s, capacity);
  }

  /** Runs as `[start, end)` pairs in id order (tests and invariant checks). */
  runs(): Array<[number, number]> {
    const out: Array<[number, number]> = [];
    for (let id = 0; id < this.listed.length;) {
      if (this.listed[id] !== 1) {
        id++;
        continue;
      }
      const e = this.endOf[id]!;
      if (e <= id || !this.orders[order(e - id)]?.has(id) || this.startOf[e - 1] !== id) throw new Error(`free run at ${id} corrupt`);
      for (let j = id; j < e; j++) if (this.listed[j] !== 1) throw new Error(`free run [${id},${e}) has a hole at ${j}`);
      out.push([id, e]);
      id = e;
    }
    return out;
  }

  private file(start: number, end: number): void {
    this.endOf[start] = end;
    this.startOf[end - 1] = start;
    const o = order(end - start);
    while (this.orders.length <= o) this.orders.push(new Set());
    this.orders[o]!.add(start);
  }

  private unfile(start: number, end: number): void {
    this.orders[order(end - start)]!.delete(start);
  }
}

const order = (len: number): number => 31 - Math.clz32(len);
