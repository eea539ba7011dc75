/** What RestoreBuffers borrows from: a BufferPool, or one that keeps nothing idle. */
export interface BufferSource {
  take(bytes: number): ArrayBuffer;
  give(buffer: ArrayBuffer): void;
}

/**
 * The host buffers one restore uses, taken from a pool and all given back when it ends: layer
 * payload slots, kept for the whole restore, and scratch buffers for SSD reads that found no
 * room in the host pool, each only until every segment read into it was copied out (then it is
 * spare, and the next such read takes it before asking the pool).
 */
export class RestoreBuffers {
  private readonly spare: ArrayBuffer[] = [];
  /** Segments still to be copied out of each scratch buffer. */
  private readonly users = new Map<ArrayBuffer, number>();
  private readonly held = new Set<ArrayBuffer>();

  constructor(private readonly pool: BufferSource) {}

  /** A buffer of at least `bytes` for the rest of the restore. */
  take(bytes: number): ArrayBuffer {
    const b = this.pool.take(bytes);
    this.held.add(b);
    return b;
  }

  /** A scratch buffer of at least `bytes`: a spare one if one is large enough. */
  scratch(bytes: number): ArrayBuffer {
    const i = this.spare.findIndex((b) => b.byteLength >= bytes);
    return i >= 0 ? this.spare.splice(i, 1)[0]! : this.take(bytes);
  }

  /** One more segment lies in scratch buffer `b`. */
  use(b: ArrayBuffer): void {
    this.users.set(b, (this.users.get(b) ?? 0) + 1);
  }

  /** A segment in `b` was copied out; `b` is spare once none is left in it. */
  done(b: ArrayBuffer): void {
    const left = (this.users.get(b) ?? 1) - 1;
    if (left > 0) this.users.set(b, left);
    else this.unused(b);
  }

  /** `b` holds nothing anyone needs (its read failed, or all of it was copied out). */
  unused(b: ArrayBuffer): void {
    this.users.delete(b);
    this.spare.push(b);
  }

  /** Every buffer back to the pool: call only once no read or copy uses any of them. */
  giveBack(): void {
    for (const b of this.held) this.pool.give(b);
    this.held.clear();
    this.spare.length = 0;
    this.users.clear();
  }
}
