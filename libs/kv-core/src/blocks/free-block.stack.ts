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

  /** Resizes the id space to `capacity` ids; callers remove ids beyond it first. */
  grow(capacity: number): void {
    const next = new Int32Array(capacity).fill(-1);
    next.set(this.pos.subarray(0, Math.min(capacity, this.pos.length)));
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
