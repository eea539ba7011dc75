import type { KvRowGeometry } from '@mnemo/kv-core';
import type { ChunkSlice } from './chunk.reader.js';
import type { ChunkPayload } from './tier.writer.js';
import type { PrefetchAdvisory } from '@mnemo/kv-core';

/** One key's answer from a peer: its verified payload, or a miss (not held, corrupt, truncated, or the stream broke). */
export interface PeerChunk {
  readonly key: string;
  /** `[layer][K|V][256][row]` for the requested layer range; undefined = miss. */
  readonly payload?: Float32Array;
  /** A miss the peer answered: it no longer holds this key (not a fault of the peer or the link). */
  readonly stale?: boolean;
}

/** What node ↔ node transfer asks of the local offload tiers. */
export interface ChunkStore {
  /** Layers [layerStart, layerEnd) of a chunk, verified; undefined when not (wholly) held. */
  readChunk(key: string, layerStart: number, layerEnd: number): Promise<ChunkSlice | undefined>;
  /**
   * Whole chunks received from a peer into the host pool (then SSD, as any written chunk); with
   * an advisory, host only and first to go under pressure until a request uses them.
   */
  importChunks(model: string, chunks: readonly ChunkPayload[], advisory?: PrefetchAdvisory): Promise<void>;
  /** Drops what an advisory prefetched and no request used; returns the segments dropped. */
  forget(advisoryId: string): number;
  /** Bytes of one layer of one chunk of `model`; undefined when the tiers keep none of its KV. */
  segmentBytes(model: string): number | undefined;
  /** Layers and row width of `model`'s KV; undefined when the tiers keep none of it. */
  geometry(model: string): KvRowGeometry | undefined;
  /** Whether the host pool holds every layer of the chunk. */
  holdsOnHost(model: string, key: string): boolean;
  /**
   * Chunks an advisory pulled that are here now: in the host pool, or staged on the device and
   * not yet taken by a prefill (the engine may have reclaimed a staged copy since; it counts).
   */
  advisoryChunksHeld(model: string, advisoryId: string): number;
}

/** No tiers here (store off, or an engine without KV bytes): every key is a miss and nothing is imported. */
export const NO_CHUNK_STORE: ChunkStore = {
  readChunk: async () => undefined,
  importChunks: async () => undefined,
  forget: () => 0,
  segmentBytes: () => undefined,
  geometry: () => undefined,
  holdsOnHost: () => false,
  advisoryChunksHeld: () => 0,
};

export const CHUNK_STORE = Symbol('CHUNK_STORE');
