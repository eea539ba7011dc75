import { Inject, Injectable } from '@nestjs/common';
import { advisoryDueMs, ErrorCode, isChunkKey, MnemoError, planPrefetchPulls, prefetchExpiry, segmentElems } from '@mnemo/kv-core';
import type { Engine } from '@mnemo/engine';
import { CLOCK, type Clock } from '@mnemo/service-kit';
import { NODE_CONFIG, type NodeManagerConfig } from '../config/node-manager.config.js';
import { ENGINE } from '../engine/engine.factory.js';
import { checkKvSources } from '../peers/kv-sources.check.js';
import { CHUNK_STORE, type ChunkStore } from '../kv-store/chunk-store.port.js';
import type { PrefetchAdvisory } from '@mnemo/kv-core';
import { ChunkPeerClient } from '../peers/chunk-peer.client.js';
import { AdvisoryRegistry } from './advisory.registry.js';
import type { PrefetchCommand } from './prefetch.command.js';

/** Keys one advisory may name (a long conversation's prefix; bounds the work one message can cause). */
export const MAX_PREFETCH_KEYS = 4096;
const MAX_ID_CHARS = 128;

/**
 * Advisory prefetch (Symphony §3.3): a request for a session is expected on this node, so the
 * chunks of its prefix that other nodes hold and this one lacks are pulled over ChunkTransfer
 * into the host pool now, off the request's critical path. Replies at once with how many chunks
 * were queued; the pull runs in the background, each verified chunk imported as it arrives
 * (lower chunks first, as a prefix is useful only from its start). Prefetched chunks are the
 * first thing the host pool lets go of under pressure, and leave when the advisory is forgotten
 * or expires (see PrefetchedChunks).
 */
@Injectable()
export class PrefetchUseCase {
  private readonly pulls = new Set<Promise<void>>();

  constructor(
    @Inject(ENGINE) private readonly engine: Engine,
    @Inject(CHUNK_STORE) private readonly store: ChunkStore,
    @Inject(ChunkPeerClient) private readonly client: ChunkPeerClient,
    @Inject(AdvisoryRegistry) private readonly advisories: AdvisoryRegistry,
    @Inject(NODE_CONFIG) private readonly config: NodeManagerConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  execute({ request: r }: PrefetchCommand): number {
    if (!r.advisoryId || r.advisoryId.length > MAX_ID_CHARS)
      throw new MnemoError(ErrorCode.InvalidRequest, `advisory_id must be 1–${MAX_ID_CHARS} characters`);
    if (r.sessionId.length > MAX_ID_CHARS)
      throw new MnemoError(ErrorCode.InvalidRequest, `session_id must be at most ${MAX_ID_CHARS} characters`);
    if (!this.engine.models().some((m) => m.id === r.model))
      throw new MnemoError(ErrorCode.ModelNotFound, `model ${r.model} is not served by node ${this.config.NODE_ID}`);
    if (r.chunkKeys.length > MAX_PREFETCH_KEYS)
      throw new MnemoError(ErrorCode.InvalidRequest, `at most ${MAX_PREFETCH_KEYS} chunk_keys, got ${r.chunkKeys.length}`);
    const bad = r.chunkKeys.find((k) => !isChunkKey(k));
    if (bad !== undefined) throw new MnemoError(ErrorCode.InvalidRequest, `not a chunk key: ${JSON.stringify(bad)}`);
    checkKvSources(r.sources);
    const now = this.clock.unixMs();
    const expiresAtMs = prefetchExpiry(Number(r.expiresAtMs), now, this.config.NODE_PREFETCH_TTL_MS!);
    if (expiresAtMs === null) throw new MnemoError(ErrorCode.InvalidRequest, `advisory ${r.advisoryId} expired before it arrived`);
    this.advisories.expire(now);
    if (!this.advisories.has(r.advisoryId) && this.advisories.size >= this.config.NODE_PREFETCH_MAX_ADVISORIES!) {
      throw new MnemoError(ErrorCode.Overloaded, `node ${this.config.NODE_ID} holds ${this.advisories.size} advisories already`);
    }
    const g = this.store.geometry(r.model);
    // No KV tiers here (store off, or the sim engine): nothing to pull, and nothing held.
    if (!g) return 0;
    const advisory = {
      id: r.advisoryId,
      expiresAtMs,
      receivedMs: now,
      priority: r.priority,
      dueMs: advisoryDueMs({ expectedArrivalMs: Number(r.expectedArrivalMs), ordered: r.ordered, receivedMs: now }),
    };
    const pulls = planPrefetchPulls(r.chunkKeys, r.sources, (key) => this.store.holdsOnHost(r.model, key));
    const queued = pulls.reduce((n, p) => n + p.chunks.length, 0);
    this.advisories.add({ id: r.advisoryId, sessionId: r.sessionId, model: r.model, expiresAtMs, queued });
    for (const { source, chunks } of pulls) {
      const p = this.pull(r.sources[source]!.grpcAddress, r.model, chunks, g.layers, segmentElems(g) * 4, advisory).finally(() =>
        this.pulls.delete(p),
      );
      this.pulls.add(p);
    }
    return queued;
  }

  /** Resolves when every pull started so far has ended (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.pulls.size > 0) await Promise.all([...this.pulls]);
  }

  private async pull(
    address: string,
    model: string,
    chunks: ReadonlyArray<{ key: string; position: number }>,
    layers: number,
    segBytes: number,
    advisory: PrefetchAdvisory,
  ): Promise<void> {
    const position = new Map(chunks.map((c) => [c.key, c.position]));
    for await (const c of this.client.fetch(
      address,
      chunks.map((c) => c.key),
      0,
      layers,
      layers * segBytes,
    )) {
      // A miss ends nothing: the request will recompute what is not here.
      if (c.payload) await this.store.importChunks(model, [{ key: c.key, position: position.get(c.key)!, payload: c.payload }], advisory);
    }
  }
}
