/**
 * Physical block ids `0 … capacity-1` of one device cache, with reference counts so that
 * sequences sharing a prefix share its blocks.
 *
 * Invariant (checked by {@link BlockAllocator.checkInvariant} in tests):
 *   - every id is either free (refCount 0, in `free` exactly once, `pos[id]` = its index there)
 *     or allocated (refCount ≥ 1, `pos[id]` = -1);
 *   - numFree + (allocated ids) = capacity.
 *
 * `free` is a stack: allocate pops, release pushes, both O(1) per block. LIFO hands back the
 * most recently released blocks first, which are the likeliest still warm in L2 / the TLB.
 * `pos` makes removing an arbitrary free id O(1) (swap with top), which `shrink` needs.
 *
 * "No space" is a normal outcome and returns null; only a broken invariant (double free,
 * ref of a free block, unknown id) throws — and it throws before mutating anything, so a
 * failed call leaves the allocator as it was.
 */
export class BlockAllocator {
  private readonly free: number[] = [];
  private readonly pos: number[] = [];
  private readonly refs: number[] = [];

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 0) throw new RangeError(`capacity must be a non-negative integer, got ${capacity}`);
    this.grow(capacity);
  }

  get capacity(): number {
    return this.refs.length;
  }

  get numFree(): number {
    return this.free.length;
  }

  get numUsed(): number {
    return this.refs.length - this.free.length;
  }

  /** Takes `n` free blocks with refCount 1, or returns null (allocating nothing) if fewer than `n` are free. */
  allocate(n: number): number[] | null {
    if (!Number.isInteger(n) || n < 0) throw new RangeError(`block count must be a non-negative integer, got ${n}`);
    if (n > this.free.length) return null;
    const out = new Array<number>(n);
    for (let i = 0; i < n; i++) {
      const id = this.free.pop()!;
      this.pos[id] = -1;
      this.refs[id] = 1;
      out[i] = id;
    }
    return out;
  }

  /** Adds one reference to each allocated id (a sequence starts sharing them). */
  incRef(ids: readonly number[]): void {
    for (const id of ids) {
      this.assertKnown(id);
      if (this.refs[id] === 0) throw new Error(`incRef of free block ${id}`);
    }
    for (const id of ids) this.refs[id]!++;
  }

  /**
   * Drops one reference from each id; ids reaching zero return to the free list.
   * Returns those newly freed ids. An id may appear several times (one reference each).
   */
  decRef(ids: readonly number[]): number[] {
    const drops = new Map<number, number>();
    for (const id of ids) {
      this.assertKnown(id);
      const d = (drops.get(id) ?? 0) + 1;
      if (d > this.refs[id]!) throw new Error(`double free of block ${id}`);
      drops.set(id, d);
    }
    const freed: number[] = [];
    for (const [id, d] of drops) {
      this.refs[id]! -= d;
      if (this.refs[id] === 0) {
        this.pos[id] = this.free.length;
        this.free.push(id);
        freed.push(id);
      }
    }
    return freed;
  }

  /** Same as {@link decRef}: a sequence lets go of its blocks; shared ones stay allocated. */
  release(ids: readonly number[]): number[] {
    return this.decRef(ids);
  }

  refCount(id: number): number {
    this.assertKnown(id);
    return this.refs[id]!;
  }

  isFree(id: number): boolean {
    return this.refCount(id) === 0;
  }

  /** Adds `n` new free blocks with the next ids (the device cache grew by whole blocks). */
  grow(n: number): void {
    if (!Number.isInteger(n) || n < 0) throw new RangeError(`grow count must be a non-negative integer, got ${n}`);
    const first = this.refs.length;
    // Push high ids first so a fresh allocator hands out 0, 1, 2, … in order.
    for (let id = first + n - 1; id >= first; id--) {
      this.refs[id] = 0;
      this.pos[id] = this.free.length;
      this.free.push(id);
    }
  }

  /**
   * Removes the highest `n` ids (the cache shrinks from its end). Returns false and changes
   * nothing if any of them is in use: the caller must migrate those blocks first.
   */
  shrink(n: number): boolean {
    if (!Number.isInteger(n) || n < 0 || n > this.refs.length) throw new RangeError(`cannot shrink by ${n}`);
    const first = this.refs.length - n;
    for (let id = first; id < this.refs.length; id++) if (this.refs[id] !== 0) return false;
    for (let id = this.refs.length - 1; id >= first; id--) {
      const at = this.pos[id]!;
      const last = this.free.pop()!;
      if (last !== id) {
        this.free[at] = last;
        this.pos[last] = at;
      }
    }
    this.refs.length = first;
    this.pos.length = first;
    return true;
  }

  /** Verifies the invariant in O(capacity); for tests and debug assertions, not the hot path. */
  checkInvariant(): void {
    const seen = new Set<number>();
    this.free.forEach((id, i) => {
      if (seen.has(id)) throw new Error(`block ${id} twice in free list`);
      seen.add(id);
      if (this.pos[id] !== i || this.refs[id] !== 0) throw new Error(`free block ${id} inconsistent`);
    });
    for (let id = 0; id < this.refs.length; id++) {
      if (!seen.has(id) && (this.refs[id]! < 1 || this.pos[id] !== -1)) throw new Error(`used block ${id} inconsistent`);
    }
  }

  private assertKnown(id: number): void {
    if (!Number.isInteger(id) || id < 0 || id >= this.refs.length) throw new RangeError(`unknown block id ${id}`);
  }
}
