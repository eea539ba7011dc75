/** A whole chunk's KV in the payload layout `[layer][K|V][256][kv_head][head_dim]` (fp32). */
export interface ChunkPayload {
  readonly key: string;
  /** Index of the chunk in its key chain (position / 256). */
  readonly position: number;
  readonly payload: Float32Array;
  /**
   * Called once the tiers no longer read `payload` (its host copy landed, and any SSD write
   * made straight from it finished or was dropped), so a pooled buffer can be reused.
   */
  readonly release?: () => void;
}

/** Segments per part of a host write-through (its SSD writes start as each part lands; splitWrites cuts them). */
export const HOST_PART_SEGMENTS = 64;

/**
 * Segments of the first part: it lands (and its SSD writes start) after a quarter of the copy a
 * full part takes, while the parts after it stay large (each costs a native call and a pass of
 * bookkeeping on the event loop).
 */
export const HOST_FIRST_PART_SEGMENTS = 16;

/** Readers of one chunk's payload: the host write, and each SSD write queued straight from it; the last to drop releases it. */
export class PayloadUse {
  private users = 1;

  constructor(readonly chunk: ChunkPayload) {}

  add(): this {
    this.users++;
    return this;
  }

  drop(): void {
    if (--this.users === 0) this.chunk.release?.();
  }
}
