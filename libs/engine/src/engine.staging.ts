/** Symphony's staged chunks and SwiftCache's layer stream on an engine. */

/** Purge rank of a staged chunk (kv-core's `StageRank`): advisory priority, due time, when prefetched, chain position. */
export interface StagedChunkRank {
  readonly priority: number;
  readonly dueMs: number;
  readonly stamp: number;
  readonly position: number;
}

/** Per model, since start, and the chunks staged now. */
export interface StagingStats {
  readonly staged: number;
  readonly adopted: number;
  readonly purged: number;
  readonly unstaged: number;
  readonly chunks: number;
}

/**
 * Symphony's promotion of prefetched KV to the device: a whole chunk (all layers) placed in free
 * device blocks outside any sequence, ahead of the request an advisory announced. A prefill whose
 * prompt reaches the chunk's key takes it over as a device prefix-cache hit (no restore on its
 * path). Until then it is the first thing the device reclaims when blocks are needed — before
 * cached prefixes, without copy-back (cooperative memory) — and a withdrawn advisory unstages it.
 */
export interface KvStaging {
  /**
   * Places chunk `key` (a chunk key of `model`) on the device from `payload` (the chunk payload
   * layout, every layer, written lower layers first). False, placing nothing, when the device
   * holds the chunk already or has fewer free blocks than a chunk takes: promotion never evicts.
   */
  stage(model: string, key: string, payload: Float32Array, rank: StagedChunkRank): boolean;
  /** Drops a staged chunk no prefill took; false when it is not staged. */
  unstage(model: string, key: string): boolean;
  stats(model: string): StagingStats;
}

/** Per model, since start. */
export interface LayerStreamCounters {
  /** Time compute waited on a layer's KV that was not resident yet (stream stall time). */
  stallSeconds: number;
  sequences: number;
  /** KV bytes moved between the resident planes and the backings. */
  bytes: number;
}

/**
 * SwiftCache's layer stream cache on the serving path: a context longer than a model's device
 * cache keeps only a window of layers resident and streams the rest from backing blocks (the
 * model's own cache, lent units included, then host memory), overlapped with compute. One
 * streamed sequence per model at a time; it is never preempted.
 */
export interface EngineLayerStream {
  /** Longest context (blocks) a streamed sequence of `model` could hold with `deviceBlocks` of its cache. */
  limit(model: string, deviceBlocks: number): number;
  /** Whether a streamed prefill of `contextBlocks` would find its memory now. */
  canStart(model: string, contextBlocks: number): boolean;
  stats(model: string): LayerStreamCounters;
}
