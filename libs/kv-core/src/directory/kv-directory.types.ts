/** Where a node keeps a chunk, fastest first (mirrors mnemo.v1.KvTier without importing it). */
export type DirectoryTier = 'device' | 'host' | 'ssd';

/** Tiers from quickest to bring back to slowest. */
export const DIRECTORY_TIERS: readonly DirectoryTier[] = ['device', 'host', 'ssd'];

/** One change a node reported (a KvChange of kv.proto, decoded). */
export interface DirectoryChange {
  readonly kind: 'stored' | 'removed' | 'truncated';
  readonly tier: DirectoryTier;
  readonly keys: readonly string[];
}

/** A chunk as one node holds it: the fastest tier with all its layers, if any. */
export interface ChunkHolding {
  readonly nodeId: string;
  /** Fastest tier holding every layer (a truncated copy does not count: it lacks later layers). */
  readonly tier: DirectoryTier;
}

/** Per node: how much of a request's key list it holds, and how fast it can be read there. */
export interface NodePrefix {
  readonly nodeId: string;
  /** Leading keys of the request this node holds on some tier (all layers). */
  readonly prefixChunks: number;
  /** For each of those leading keys, the fastest tier holding it. */
  readonly tiers: readonly DirectoryTier[];
}

export interface KvDirectoryStats {
  /** Chunk keys known (each with one or more holders). */
  readonly keys: number;
  /** (key, node) pairs known: the directory's memory is proportional to this. */
  readonly holdings: number;
  /** Keys forgotten because the bound was reached. */
  readonly evictions: number;
}
