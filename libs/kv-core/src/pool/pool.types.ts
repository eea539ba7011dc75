/**
 * Kind of pool device, which is also the tier a segment replica sits in (Unified KV pooling
 * Table I: MEM or SSD). A segment has at most one replica per tier.
 */
export type PoolTier = 'mem' | 'ssd';

/** Tiers from quickest to bring back to slowest; lookups list replicas in this order. */
export const TIERS_FASTEST_FIRST: readonly PoolTier[] = ['mem', 'ssd'];

/** Position of a tier in {@link TIERS_FASTEST_FIRST}; the index of per-tier arrays. */
export function tierIndex(tier: PoolTier): 0 | 1 {
  if (tier === 'mem') return 0;
  if (tier === 'ssd') return 1;
  throw new RangeError(`unknown pool tier ${String(tier)}`);
}

/**
 * Where one replica of a segment (chunk key, layer) lives: a global lookup table entry
 * (Unified KV pooling Table I) plus the payload length and its CRC32C, so a torn or stale
 * read is detected and treated as a miss.
 *
 * `offset` is a byte offset into the device: into the host region for `mem`, and a
 * sector-aligned byte offset (LBA × sector size) for `ssd`. `length` is the payload length;
 * the space held in the device's allocator is `length` rounded up to its alignment.
 */
export interface SegmentLocation {
  readonly deviceIndex: number;
  readonly type: PoolTier;
  readonly offset: number;
  readonly length: number;
  readonly crc32c: number;
}

/**
 * One segment = one layer of one chunk. `position` is the chunk's index in its key chain
 * (0 for the first 256 tokens); a chunk key fixes it, since the key covers the whole prefix.
 */
export interface SegmentRef {
  readonly chunkKey: string;
  readonly position: number;
  readonly layer: number;
}

/** Half-open byte range `[offset, offset + length)` of a device. */
export interface Extent {
  readonly offset: number;
  readonly length: number;
}
