/**
 * The free block ids of a device cache as a stack with positions: push/pop and removal of an
 * arbitrary id are O(1) (swap with the top), which shrinking at the end of the id space needs.
 * LIFO hands back the most recently freed blocks first, the likeliest still warm in cache/TLB.
 */
export class FreeBlockStack {
  private readonly stack: number[] = [];
  /** Index of each id in `stack`, or -1 when it is not free. */
  private pos = new Int32Array(0);

  get size(): number {
    return this.stack.length;
  }

  /**
   * Resizes the id space to `capacity` ids; callers remove ids beyond it first (so their
   * positions are already -1). The position array only ever grows, doubling, so an elastic
   * cache that grows and shrinks by a few blocks at its end pays amortized O(blocks touched),
   * not O(capacity) per resize.
   */
  grow(capacity: number): void {
    if (capacity <= this.pos.length) return;
    const next = new Int32Array(Math.max(capacity, 2 * this.pos.length)).fill(-1);
    next.set(this.pos);
    this.pos = next;
  }

  has(id: number): boolean {
    return this.pos[id] !== -1;
  }

  push(id: number): void {
    if (this.pos[id] !== -1) throw new Error(`block ${id} is already free`);
    this.pos[id] = this.stack.length;
    this.stack.push(id);
  }

  pop(): number | undefined {
    const id = this.stack.pop();
    if (id !== undefined) this.pos[id] = -1;
    return id;
  }

  remove(id: number): void {
    const at = this.pos[id]!;
    if (at === -1) throw new Error(`block ${id} is not free`);
    const last = this.stack.pop()!;
    if (last !== id) {
      this.stack[at] = last;
      this.pos[last] = at;
    }
    this.pos[id] = -1;
  }

  /** The set of free ids (tests and invariant checks). */
  ids(capacity: number): Set<number> {
    const out = new Set<number>();
    this.stack.forEach((id, i) => {
      if (id >= capacity || this.pos[id] !== i || out.has(id)) throw new Error(`free stack corrupt at ${id}`);
      out.add(id);
    });
    return out;
  }
}
