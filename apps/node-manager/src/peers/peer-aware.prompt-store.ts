import { choosePeerPrefix } from '@mnemo/kv-core';
import type { KvRestorePlan } from '@mnemo/engine';
import type { StoredPrompt } from '../kv-store/kv.store.js';
import type { ChunkStore } from '../kv-store/chunk-store.port.js';
import type { PromptStore } from '../kv-store/prompt-store.port.js';
import type { ChunkPeerClient } from './chunk-peer.client.js';
import { chunksFor, PeerRestorePlan } from './peer-restore.plan.js';

/** After a failed fetch, a source is left out for this long (the retry recomputes instead of failing again). */
const FAILED_SOURCE_MS = 30_000;

/** Peer restores the node made, for metrics. */
export interface PeerRestoreCounters {
  plans: number;
  restoredTokens: number;
  failures: number;
  /** Time prefills waited on peer layers after their compute ran out (blocked I/O), summed. */
  blockedMs: number;
}

/**
 * The batch scheduler's view of where a prompt's KV can come from: the local tiers, or — when
 * the request names other nodes holding more of the prefix (kv_sources) — a peer, fetched layer
 * by layer. A peer's chunks are kept in the local host pool afterwards, so the session's next
 * turn finds them here.
 */
export class PeerAwarePromptStore implements PromptStore {
  readonly counters: PeerRestoreCounters = { plans: 0, restoredTokens: 0, failures: 0, blockedMs: 0 };
  private readonly failed = new Map<string, number>();

  constructor(
    private readonly local: PromptStore,
    private readonly chunks: ChunkStore,
    private readonly client: ChunkPeerClient,
    private readonly now: () => number = Date.now,
  ) {}

  restorableUntil(p: StoredPrompt, deviceTokens: number): number {
    const local = this.local.restorableUntil(p, deviceTokens);
    return this.choose(p, deviceTokens, local)?.until ?? local;
  }

  warm(requestId: string, p: StoredPrompt, deviceTokens: number): void {
    this.local.warm?.(requestId, p, deviceTokens);
  }

  cool(requestId: string): void {
    this.local.cool?.(requestId);
  }

  restorePlan(p: StoredPrompt, deviceTokens: number, requestId?: string): KvRestorePlan | undefined {
    const g = this.chunks.geometry(p.model);
    const choice = g && this.choose(p, deviceTokens, this.local.restorableUntil(p, deviceTokens));
    if (!g || !choice) return this.local.restorePlan(p, deviceTokens, requestId);
    if (requestId !== undefined) this.local.cool?.(requestId);
    const source = p.sources![choice.source]!;
    const { first, count } = chunksFor(deviceTokens, choice.until);
    this.counters.plans++;
    return new PeerRestorePlan(this.client, source.address, g, choice.keys.slice(0, count), first, deviceTokens, choice.until, (o) => {
      this.counters.blockedMs += o.blockedMs;
      if (!o.ok) {
        this.counters.failures++;
        const now = this.now();
        for (const [a, until] of this.failed) if (until <= now) this.failed.delete(a);
        this.failed.set(source.address, now + FAILED_SOURCE_MS);
        return;
      }
      this.counters.restoredTokens += choice.until - deviceTokens;
      void this.chunks.importChunks(p.model, o.chunks);
    });
  }

  private choose(p: StoredPrompt, deviceTokens: number, localUntil: number) {
    if (!p.sources?.length || !this.chunks.geometry(p.model)) return null;
    const now = this.now();
    return choosePeerPrefix(
      p.chunkKeys,
      p.promptTokens,
      deviceTokens,
      localUntil,
      p.sources,
      (i) => (this.failed.get(p.sources![i]!.address) ?? 0) <= now,
      p.blockKeys,
    );
  }
}
