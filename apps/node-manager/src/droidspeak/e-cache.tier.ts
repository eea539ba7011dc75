import {
  CHUNK_TOKENS,
  eCacheChunks,
  eCacheKeys,
  eCacheModelId,
  eCacheRowElems,
  ErrorCode,
  MnemoError,
  type KvRowGeometry,
} from '@mnemo/kv-core';
import type { ChunkSlice } from '../kv-store/chunk.reader.js';
import type { PeerSource } from '../kv-store/kv.store.js';
import type { ChunkPayload } from '../kv-store/tier.writer.js';
import type { PeerChunk } from '../kv-store/chunk-store.port.js';

/** What the E-cache tier asks of the node's KV store (KvStore). */
export interface ECacheStorePort {
  holds(model: string, key: string): boolean;
  readLocal(key: string, layerStart: number, layerEnd: number): Promise<ChunkSlice | undefined>;
  /** Write-through to host and SSD, as a chunk the node computed. */
  writeChunks(model: string, chunks: readonly ChunkPayload[]): Promise<void>;
  hostBytes(model: string): number;
}

/** What it asks of the peer client (ChunkPeerClient). */
export interface ECachePeerPort {
  fetch(address: string, keys: readonly string[], layerStart: number, layerEnd: number, expectBytes: number): AsyncIterable<PeerChunk>;
}

/** Where the E cache of a prefix comes from for one plan: loaded once, when the engine asks. */
export interface ECacheSource {
  readonly from: 'local' | 'peer';
  load(): Promise<Float32Array>;
}

/** After a failed E fetch a peer is not asked for E caches for this long (the retry runs the plan widened). */
const FAILED_PEER_MS = 30_000;

/** The tier-only model that keeps a base's E caches (kv-core `eCacheModelId`), when its d_model allows one. */
export function eCacheModel(base: string, dModel: number | undefined): { id: string; geometry: KvRowGeometry } | undefined {
  const row = dModel === undefined ? null : eCacheRowElems(dModel);
  return row === null ? undefined : { id: eCacheModelId(base), geometry: { layers: 1, rowElems: row } };
}

/**
 * Base models' E caches kept like KV chunks: each whole chunk of a captured E cache
 * (`[256][d_model]` at one layer) is a one-layer chunk of the base's E-cache model under a key
 * derived from the base chunk key and the layer, written through to the host pool and SSD pool
 * (journaled, so a restarted node finds it; CRC-checked on every read; evicted like any chunk;
 * reported as KV events), and served to peers by the same ChunkTransfer.FetchChunks. A plan gets
 * its E cache from the local tiers, or from a `kv_sources` peer that lists the E keys. A chunk
 * missing or corrupt when read fails the load with data_loss: the prefill is requeued and, the
 * bad replica gone (or the peer set aside), planned again widened — never run on a wrong E cache.
 */
export class ECacheTier {
  private readonly failed = new Map<string, number>();

  constructor(
    private readonly store: ECacheStorePort,
    private readonly peers: ECachePeerPort,
    /** d_model of a base whose E-cache model the store registered; undefined otherwise. */
    private readonly dModelOf: (base: string) => number | undefined,
    private readonly now: () => number = Date.now,
  ) {}

  hostBytes(bases: Iterable<string>): number {
    let n = 0;
    for (const b of new Set(bases)) n += this.store.hostBytes(eCacheModelId(b));
    return n;
  }

  /** Keeps the whole chunks of `e` (`[promptTokens][d_model]`) that the tiers do not hold yet. */
  put(base: string, baseKeys: readonly string[], layer: number, e: Float32Array, promptTokens: number): void {
    const d = this.dModelOf(base);
    if (d === undefined || e.length !== promptTokens * d) return;
    const model = eCacheModelId(base);
    const keys = eCacheKeys(baseKeys, layer, Math.min(baseKeys.length, Math.floor(promptTokens / CHUNK_TOKENS)));
    const stride = CHUNK_TOKENS * d;
    const chunks = keys.flatMap((key, c) =>
      this.store.holds(model, key) ? [] : [{ key, position: c, payload: e.slice(c * stride, (c + 1) * stride) }],
    );
    if (chunks.length > 0) void this.store.writeChunks(model, chunks);
  }

  /** Whether the E cache at `layer` for [0, until) can be had now (planning; starts nothing). */
  available(base: string, baseKeys: readonly string[], layer: number, until: number, peers: readonly PeerSource[] = []): boolean {
    return this.find(base, baseKeys, layer, until, peers) !== undefined;
  }

  /** Where the E cache at `layer` for positions [0, until) comes from; undefined when nowhere. A peer's fetch starts now. */
  source(
    base: string,
    baseKeys: readonly string[],
    layer: number,
    until: number,
    peers: readonly PeerSource[] = [],
  ): ECacheSource | undefined {
    const found = this.find(base, baseKeys, layer, until, peers);
    if (!found) return undefined;
    const { d, keys, address } = found;
    if (address === undefined) return { from: 'local', load: () => this.loadLocal(keys, d, until) };
    // Started now, while the plan is handed to the engine: the layers below u1 run meanwhile.
    const fetched = this.fetchPeer(address, eCacheModelId(base), keys, d, until);
    fetched.catch(() => undefined);
    return { from: 'peer', load: () => fetched };
  }

  private find(
    base: string,
    baseKeys: readonly string[],
    layer: number,
    until: number,
    peers: readonly PeerSource[],
  ): { d: number; keys: string[]; address?: string } | undefined {
    const d = this.dModelOf(base);
    const n = eCacheChunks(until);
    if (d === undefined || n === 0 || n > baseKeys.length) return undefined;
    const model = eCacheModelId(base);
    const keys = eCacheKeys(baseKeys, layer, n);
    if (keys.every((k) => this.store.holds(model, k))) return { d, keys };
    const now = this.now();
    const peer = peers.find((p) => (this.failed.get(p.address) ?? 0) <= now && keys.every((k) => p.chunkKeys.includes(k)));
    return peer ? { d, keys, address: peer.address } : undefined;
  }

  private async loadLocal(keys: readonly string[], d: number, until: number): Promise<Float32Array> {
    const parts: Float32Array[] = [];
    for (const k of keys) {
      const slice = await this.store.readLocal(k, 0, 1);
      if (!slice)
        throw new MnemoError(ErrorCode.DataLoss, `E-cache chunk ${k} is gone or failed its checksum (the request is planned again)`);
      parts.push(slice.payload);
    }
    return assemble(parts, d, until);
  }

  private async fetchPeer(address: string, model: string, keys: readonly string[], d: number, until: number): Promise<Float32Array> {
    const parts: Float32Array[] = [];
    for await (const c of this.peers.fetch(address, keys, 0, 1, CHUNK_TOKENS * d * 4)) {
      if (!c.payload) {
        this.failed.set(address, this.now() + FAILED_PEER_MS);
        throw new MnemoError(ErrorCode.DataLoss, `peer ${address} could not give E-cache chunk ${c.key} (the request is planned again)`);
      }
      parts.push(c.payload);
    }
    // Kept here too: the next request for this prefix, and a restart, find it locally.
    void this.store.writeChunks(
      model,
      keys.map((key, position) => ({ key, position, payload: parts[position]! })),
    );
    return assemble(parts, d, until);
  }
}

/** `[until][d]` from whole chunks `[256][d]`. */
function assemble(parts: readonly Float32Array[], d: number, until: number): Float32Array {
  const out = new Float32Array(until * d);
  parts.forEach((p, c) => out.set(p.subarray(0, Math.min(CHUNK_TOKENS, until - c * CHUNK_TOKENS) * d), c * CHUNK_TOKENS * d));
  return out;
}
