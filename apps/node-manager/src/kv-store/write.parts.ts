// The pieces of a TierWriter write-through: the size of its parts (each part's SSD write-behind
// starts as soon as it lands in host memory, while the copy threads work on the next; kv-core's
// splitWrites cuts them), the readers of a chunk's payload, and the tuning the tiers bench's A/Bs set.

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

/** Segments per part of a host write-through (its SSD writes start as each part lands). */
export const HOST_PART_SEGMENTS = 64;

/**
 * Segments of the first part: it lands (and its SSD writes start) after a quarter of the copy a
 * full part takes, while the parts after it stay large (each costs a native call and a pass of
 * bookkeeping on the event loop).
 */
export const HOST_FIRST_PART_SEGMENTS = 16;

/** For same-process A/Bs only (the tiers bench): the previous behaviour of the SSD write-behind. */
export interface TierWriterTuning {
  /** SSD batches written at once (default SSD_BATCHES_IN_FLIGHT). */
  readonly ssdBatchesInFlight?: number;
  /** Checksum SSD copies of host replicas again instead of taking the recorded CRC32C. */
  readonly recomputeSsdCrc?: boolean;
  /** Segments per part of a host write-through (default HOST_PART_SEGMENTS; 0: one part). */
  readonly hostPartSegments?: number;
  /** Segments of a write-through's first part (default HOST_FIRST_PART_SEGMENTS). */
  readonly hostFirstPartSegments?: number;
  /** Commit whenever the write-behind queue runs dry, even between the parts of one write-through. */
  readonly commitBetweenParts?: boolean;
}

/** Readers of one chunk's payload: the host write, and each SSD write queued straight from it. */
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
