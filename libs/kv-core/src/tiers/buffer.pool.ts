/** Where a BufferPool's buffers come from and go back to (the node: the addon's aligned host memory). */
export interface BufferMemory {
  alloc(bytes: number): ArrayBuffer;
  free(buffer: ArrayBuffer): void;
}

/** Idle bytes a pool keeps by default: the layer payloads and scratch of a few large restores. */
export const BUFFER_POOL_BYTES = 128 * 1024 * 1024;

/**
 * Buffers reused across restores. A restore needs a few multi-MiB buffers (layer payloads, SSD
 * scratch); a fresh one costs an allocation, page faults and zeroing of every byte on the event
 * loop before any KV is copied — a sixth of a whole 256 MiB host restore when each restore
 * allocated its own (same-process A/B in `npm run bench -- tiers`).
 *
 * A buffer is handed out again only for a request of at least half its size, so a small restore
 * never holds a huge buffer; idle buffers past `maxIdleBytes` are freed, oldest first. Buffers
 * are not zeroed on reuse: callers overwrite what they hand on (a restore fills its whole layer
 * payload) and only the node's own code sees them.
 */
export class BufferPool {
  /** Idle buffers, oldest first. */
  private readonly idle: ArrayBuffer[] = [];
  private idleBytes = 0;
  private closed = false;

  constructor(
    private readonly memory: BufferMemory,
    readonly maxIdleBytes = BUFFER_POOL_BYTES,
  ) {}

  /** A buffer of at least `bytes`: an idle one that fits best, or a new one. */
  take(bytes: number): ArrayBuffer {
    let best = -1;
    for (let i = 0; i < this.idle.length; i++) {
      const n = this.idle[i]!.byteLength;
      if (n >= bytes && n <= 2 * bytes && (best < 0 || n < this.idle[best]!.byteLength)) best = i;
    }
    if (best < 0) return this.memory.alloc(bytes);
    const b = this.idle.splice(best, 1)[0]!;
    this.idleBytes -= b.byteLength;
    return b;
  }

  /** Hands a buffer back; nothing may use it afterwards. */
  give(buffer: ArrayBuffer): void {
    if (this.closed || buffer.byteLength > this.maxIdleBytes) {
      this.memory.free(buffer);
      return;
    }
    this.idle.push(buffer);
    this.idleBytes += buffer.byteLength;
    while (this.idleBytes > this.maxIdleBytes) {
      const old = this.idle.shift()!;
      this.idleBytes -= old.byteLength;
      this.memory.free(old);
    }
  }

  /** Idle buffers and their bytes. */
  stats(): { buffers: number; bytes: number } {
    return { buffers: this.idle.length, bytes: this.idleBytes };
  }

  /** Frees every idle buffer; buffers given back later are freed at once. */
  close(): void {
    this.closed = true;
    for (const b of this.idle) this.memory.free(b);
    this.idle.length = 0;
    this.idleBytes = 0;
  }
}
