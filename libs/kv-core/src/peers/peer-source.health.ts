import type { OfferedChunks } from './peer-source.policy.js';

/** After a failed fetch, how long the failure is remembered (the retry recomputes instead of failing again). */
export const FAILED_SOURCE_MS = 30_000;

/**
 * Why a peer fetch failed:
 * - `stale`: the peer answered and said it no longer holds `key` (evicted or replaced since the
 *   directory listed it). The peer is healthy; only that key, and the chunks after it, are gone.
 * - `unreachable`: no usable answer (refused, reset, deadline, corrupt or truncated data). The
 *   peer itself is suspect.
 */
export type PeerFailure = { readonly kind: 'stale'; readonly key: string } | { readonly kind: 'unreachable' };

export interface PeerSourceHealthOptions {
  readonly ttlMs?: number;
  /** Stale keys remembered at most (oldest forgotten first): a node sees many keys, a few peers. */
  readonly maxStaleKeys?: number;
}

/**
 * Which peers, and which of their keys, a node should not fetch from for a while. One stale key
 * used to leave its whole peer out for the TTL, so a long prompt that peer really held was
 * recomputed (seconds of prefill, and every request queued behind it waited): a stale answer now
 * leaves out that key only, and an unreachable peer is left out whole.
 */
export class PeerSourceHealth {
  private readonly down = new Map<string, number>();
  /** `source|key` → until, in insertion order (oldest first). */
  private readonly stale = new Map<string, number>();
  private readonly ttlMs: number;
  private readonly maxStaleKeys: number;

  constructor(o: PeerSourceHealthOptions = {}) {
    this.ttlMs = o.ttlMs ?? FAILED_SOURCE_MS;
    this.maxStaleKeys = o.maxStaleKeys ?? 4096;
  }

  failed(source: string, failure: PeerFailure, nowMs: number): void {
    this.expire(nowMs);
    if (failure.kind === 'unreachable') {
      this.down.set(source, nowMs + this.ttlMs);
      return;
    }
    const id = `${source}|${failure.key}`;
    this.stale.delete(id);
    this.stale.set(id, nowMs + this.ttlMs);
    while (this.stale.size > this.maxStaleKeys) this.stale.delete(this.stale.keys().next().value!);
  }

  usable(source: string, nowMs: number): boolean {
    return (this.down.get(source) ?? 0) <= nowMs;
  }

  /**
   * What `source` offers, less the keys it said it no longer holds (choosePeerPrefix then stops
   * its run before them). The same object when nothing is left out.
   */
  offered<T extends OfferedChunks>(source: string, offer: T, nowMs: number): T {
    if (this.stale.size === 0) return offer;
    const fresh = offer.chunkKeys.filter((k) => (this.stale.get(`${source}|${k}`) ?? 0) <= nowMs);
    return fresh.length === offer.chunkKeys.length ? offer : { ...offer, chunkKeys: fresh };
  }

  /** Entries remembered (for tests and metrics). */
  get size(): { readonly down: number; readonly staleKeys: number } {
    return { down: this.down.size, staleKeys: this.stale.size };
  }

  private expire(nowMs: number): void {
    for (const [s, until] of this.down) if (until <= nowMs) this.down.delete(s);
    for (const [k, until] of this.stale) if (until <= nowMs) this.stale.delete(k);
  }
}
