import type { PoolTier, SegmentLocation } from './pool.types.js';

export interface LookupTableOptions {
  /** Layers per chunk of the model this table serves (one table per model geometry). */
  readonly numLayers: number;
  /** Slowest-tier (SSD) entries idle longer than this expire; Infinity (default) = never. */
  readonly ttlMs?: number;
}

/** A segment taken out of the table; free `location` in its device's allocator unless `deferred`. */
export interface Removal {
  readonly chunkKey: string;
  readonly layer: number;
  readonly tier: PoolTier;
  readonly location: SegmentLocation;
  /** Pinned when removed: the space is still being read and comes back from the last unpin. */
  readonly deferred: boolean;
}

/** A segment eviction would drop, first victim first. */
export interface Victim {
  readonly chunkKey: string;
  readonly position: number;
  readonly layer: number;
  readonly tier: PoolTier;
  readonly location: SegmentLocation;
}

/** One chunk of a cached prefix: where each layer can be read from, per tier (undefined = not there). */
export interface PrefixChunk {
  readonly chunkKey: string;
  readonly position: number;
  readonly mem: ReadonlyArray<SegmentLocation | undefined>;
  readonly ssd: ReadonlyArray<SegmentLocation | undefined>;
}

/** A pin on one replica; hand it back to {@link LookupTable.unpin} exactly once. */
export interface PinHandle {
  readonly chunkKey: string;
  readonly layer: number;
  readonly location: SegmentLocation;
}

export interface EvictionOptions {
  /**
   * Whether this tier may hold the last copy of a chunk (default true): then the last copy
   * of a referenced chunk is never chosen. Pass false when the caller knows a copy exists
   * outside this table (another node, a tier it does not track).
   */
  readonly lastTier?: boolean;
}
