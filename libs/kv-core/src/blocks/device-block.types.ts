/** Counts of a device cache's blocks by state; they always sum to `capacity`. */
export interface DeviceBlockCounts {
  readonly capacity: number;
  /** No content, ready to hand out. */
  readonly free: number;
  /** Content kept for prefix reuse, no holder: reclaimable at once (evicted least recently used first). */
  readonly cached: number;
  /** Holding prefetched chunks no sequence uses yet: reclaimable at once, before cached ones. */
  readonly staged: number;
  /** Held by at least one sequence. */
  readonly active: number;
}

/** Block groups (FastSwitch §3.1): contiguous runs per sequence, so a swap copies few large ranges. */
export interface BlockGroupOptions {
  /** Size of a sequence's first group, in blocks (grown to fit a larger allocation). */
  readonly groupBlocks: number;
}

/** Called for every cached block the manager reclaims (its content is gone from the device). */
export type BlockEvictionListener = (key: string, id: number) => void;

/** Called for every staged chunk the manager reclaims to hand its blocks to a sequence (cooperative purge). */
export type StagedPurgeListener = (key: string) => void;
