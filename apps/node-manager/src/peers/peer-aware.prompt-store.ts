import { choosePeerPrefix, CHUNK_TOKENS, PeerSourceHealth, type PeerFailure } from '@mnemo/kv-core';
import type { KvRestorePlan } from '@mnemo/engine';
import type { StoredPrompt } from '../kv-store/kv.store.js';
import type { ChunkStore } from '../kv-store/chunk-store.port.js';
import type { PromptStore } from '../kv-store/prompt-store.port.js';
import type { ChunkPeerClient } from './chunk-peer.client.js';
import { chunksFor, PeerRestorePlan } from './peer-restore.plan.js';

/** Peer restores the node made, for metrics. */
export interface PeerRestoreCounters {
  plans: number;
  restoredTokens: number;
  failures: number;
  /**
   * The failures by why: `stale` (the peer no longer held a whole chunk of the prompt),
   * `stale_partial` (nor the partial chunk a session's last turn left there), `unreachable` (a
   * chunk it did not give: down, slow past its deadline, corrupt), `pass` (every layer arrived; the
   * prefill itself failed — another restore in its pass, a cancelled request).
   */
  failuresBy: { stale: number; stale_partial: number; unreachable: number; pass: number };
  /** Time prefills waited on peer layers after their compute ran out (blocked I/O), summed. */
  blockedMs: number;
}

/**
 * The batch scheduler's view of where a prompt's KV can come from: the local tiers, or — when
 * the request names other nodes holding more of the prefix (kv_sources) — a peer, fetched layer
 * by layer. A peer's whole chunks are kept in the local host pool afterwards, so the session's
 * next turn finds them here.
 */
export class PeerAwarePromptStore implements PromptStore {
  readonly counters: PeerRestoreCounters = {
    plans: 0,
    restoredTokens: 0,
    failures: 0,
    failuresBy: noPeerFailures(),
    blockedMs: 0,
  };
  /** Sources, and keys of theirs, that failed recently: the retry recomputes instead of failing again. */
  private readonly health = new PeerSourceHealth();

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
        this.counters.failuresBy[failureReason(o.failure, p.chunkKeys)]++;
        // A failed pass whose layers all arrived (the engine's own failure) says nothing of the peer.
        if (o.failure) this.health.failed(source.address, o.failure, this.now());
        return;
      }
      this.counters.restoredTokens += choice.until - deviceTokens;
      // Whole chunks only: a partial one is superseded by the pass's own, longer KV of that chunk, and
      // importing it in the background could land after that write and bring the stale one back.
      void this.chunks.importChunks(
        p.model,
        o.chunks.filter((c) => (c.position + 1) * CHUNK_TOKENS <= choice.until),
      );
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
      p.sources.map((s) => this.health.offered(s.address, s, now)),
      (i) => this.health.usable(p.sources![i]!.address, now),
      p.blockKeys,
    );
  }
}

/** Every failure reason at 0: a fresh store's counts, and what metrics report without one. */
export function noPeerFailures(): PeerRestoreCounters['failuresBy'] {
  return { stale: 0, stale_partial: 0, unreachable: 0, pass: 0 };
}

/** A failure's reason as counted: a stale key that is none of the prompt's whole chunks is a partial chunk's. */
function failureReason(f: PeerFailure | undefined, chunkKeys: readonly string[]): keyof PeerRestoreCounters['failuresBy'] {
  if (!f) return 'pass';
  if (f.kind === 'stale' && !chunkKeys.includes(f.key)) return 'stale_partial';
  return f.kind;
}
