import { compareEvictionOrder } from './eviction.order.js';
import type { SegmentLocation } from './pool.types.js';

/** Which eviction set of its tier an entry is filed in. */
export enum Slot {
  None = 0,
  Open = 1,
  Guarded = 2,
}

/**
 * One replica of one segment in one tier: its public location (a frozen plain object, safe
 * to hand out and log) plus the table's bookkeeping.
 */
export class Entry {
  /** In-flight loads/stores reading or writing this replica. */
  pins = 0;
  /** Removed while pinned: no longer in the table; its space is freed on the last unpin. */
  removed = false;
  slot: Slot = Slot.None;
  /**
   * The access stamp this entry is filed under in its eviction set. It may lag the chunk's
   * stamp (touch is O(1) and does not re-file); eviction re-files a lagging entry when it
   * reaches the front. Never ahead of `chunk.stamp`.
   */
  stamp = 0;

  constructor(
    readonly chunk: ChunkRecord,
    readonly layer: number,
    readonly loc: SegmentLocation,
  ) {}

  get position(): number {
    return this.chunk.position;
  }
}

/** Everything the table knows about one chunk key. */
export class ChunkRecord {
  /** Last access (ms): the newest stamp of any put or touch. */
  stamp: number;
  /** Sessions (or other owners) that reference this chunk. */
  refs = 0;
  /** `replicas[tierIndex][layer]`. */
  readonly replicas: [Array<Entry | undefined>, Array<Entry | undefined>];
  /** Layers held per tier. */
  readonly held: [number, number] = [0, 0];
  /** Layers held in at least one tier: the chunk is readable when this equals the layer count. */
  covered = 0;
  /** Live SSD replicas with pins > 0. */
  pinnedSsd = 0;
  /** Filed in the expiry set, under `ttlStamp` (≤ stamp; lags like {@link Entry.stamp}). */
  inTtl = false;
  ttlStamp = 0;

  constructor(
    readonly key: string,
    readonly position: number,
    /** Creation order; a tie-breaker that makes every eviction and expiry key unique. */
    readonly seq: number,
    numLayers: number,
    stamp: number,
  ) {
    this.stamp = stamp;
    // Packed, not holey: a copy handed out by longestPrefix iterates every layer.
    this.replicas = [Array.from({ length: numLayers }, () => undefined), Array.from({ length: numLayers }, () => undefined)];
  }

  isEmpty(): boolean {
    return this.held[0] === 0 && this.held[1] === 0 && this.refs === 0;
  }
}

/** Eviction order of entries in one tier, made total by the chunk's creation order. */
export function compareEntries(a: Entry, b: Entry): number {
  return compareEvictionOrder(a, b) || a.chunk.seq - b.chunk.seq;
}

/** Expiry order of chunks: oldest filed stamp first. */
export function compareTtl(a: ChunkRecord, b: ChunkRecord): number {
  return a.ttlStamp - b.ttlStamp || a.seq - b.seq;
}
