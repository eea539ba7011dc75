import type { LookupTable } from '../pool/lookup.table.js';
import type { PoolTier, SegmentRef } from '../pool/pool.types.js';

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

/** One layer of a chunk's payload, to write to a tier: its place in the payload, and the payload's use it holds. */
export type PayloadSegment = SegmentRef & { readonly payload: Float32Array; readonly byteOffset: number; readonly use: PayloadUse };

/**
 * The segments of `chunks` a tier does not hold yet, enumerated layer by layer (Unified pooling
 * §IV-A3), so placement stripes every layer over the devices. Throws RangeError on a payload
 * that is not the model's whole chunk (`layers` segments of `segBytes`).
 */
export function missingSegments(
  table: LookupTable,
  tier: PoolTier,
  shape: { readonly layers: number; readonly segBytes: number },
  chunks: readonly ChunkPayload[],
  uses: readonly PayloadUse[],
): PayloadSegment[] {
  const floats = shape.layers * (shape.segBytes / 4);
  for (const c of chunks) {
    if (c.payload.length !== floats) throw new RangeError(`chunk ${c.key} payload has ${c.payload.length} floats, want ${floats}`);
  }
  const segs: PayloadSegment[] = [];
  for (let layer = 0; layer < shape.layers; layer++) {
    chunks.forEach((c, i) => {
      if (!table.get(c.key, layer, tier))
        segs.push({ chunkKey: c.key, position: c.position, layer, payload: c.payload, byteOffset: layer * shape.segBytes, use: uses[i]! });
    });
  }
  return segs;
}

/**
 * The SSD writes of a write-behind batch still to do, layer by layer as placement expects (jobs
 * arrive in host-device order), then by position: not those the SSD holds already, nor those
 * copying a host replica that left the host tier since they were queued.
 */
export function ssdWritesToDo<J extends { readonly seg: SegmentRef; readonly source: { readonly kind: 'host' | 'payload' } }>(
  table: LookupTable,
  jobs: readonly J[],
): Array<SegmentRef & { readonly job: J }> {
  const todo = jobs.filter(
    (j) => !table.get(j.seg.chunkKey, j.seg.layer, 'ssd') && (j.source.kind === 'payload' || table.get(j.seg.chunkKey, j.seg.layer, 'mem')),
  );
  return todo.map((j) => ({ ...j.seg, job: j })).sort((a, b) => a.layer - b.layer || a.position - b.position);
}

/** Segments per SSD batch: enough for large sequential writes, few enough to keep latency low. */
export const SSD_BATCH_SEGMENTS = 64;

/**
 * Group commit: the pools and journals are synced once the write-behind queue runs dry, or
 * after this many batches of a long burst. A sync costs about as much as writing a batch, and
 * what a crash loses before it is only un-journaled copies of chunks (misses after a restart).
 */
export const SSD_BATCHES_PER_COMMIT = 8;

/** Whether the SSD write-behind commits after its `sinceCommit`-th batch since the last one: when it ran `dry`, or every few of a burst. */
export const ssdCommitDue = (dry: boolean, sinceCommit: number): boolean => dry || sinceCommit >= SSD_BATCHES_PER_COMMIT;

/**
 * SSD batches written at once: the next batch is planned and submitted while one finishes, so
 * the device's queue does not drain at every batch boundary while JS records the last one.
 */
export const SSD_BATCHES_IN_FLIGHT = 2;
