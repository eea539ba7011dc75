import type { OfferedChunks } from './peer-source.policy.js';

/** Chunks of an advisory's prefix to pull from one source, lower chunks first. */
export interface PrefetchPull {
  /** Index into the advisory's sources. */
  readonly source: number;
  readonly chunks: ReadonlyArray<{ readonly key: string; readonly position: number }>;
}

/**
 * What an advisory prefetch pulls (Symphony §3.3): every chunk of the session's prefix this node
 * lacks in host memory that some source offers, from the first source offering it, grouped by
 * source in chunk order (a prefix is useful only from its start). `chunkKeys` is the prompt's key
 * chain from chunk 0, so a key's index is its position.
 */
export function planPrefetchPulls(
  chunkKeys: readonly string[],
  sources: readonly OfferedChunks[],
  holdsOnHost: (key: string) => boolean,
): PrefetchPull[] {
  const offered = sources.map((s) => new Set(s.chunkKeys));
  const bySource = new Map<number, Array<{ key: string; position: number }>>();
  chunkKeys.forEach((key, position) => {
    if (holdsOnHost(key)) return;
    const s = offered.findIndex((o) => o.has(key));
    if (s < 0) return;
    let chunks = bySource.get(s);
    if (!chunks) bySource.set(s, (chunks = []));
    chunks.push({ key, position });
  });
  return [...bySource].map(([source, chunks]) => ({ source, chunks }));
}

/**
 * When a prefetch's chunks lapse: the advisory's own expiry, bounded by `10 × ttlMs` from now so
 * one advisory cannot pin host memory for long; `ttlMs` from now when it names none (0). Null
 * when it expired before it arrived.
 */
export function prefetchExpiry(expiresAtMs: number, nowMs: number, ttlMs: number): number | null {
  if (expiresAtMs !== 0 && expiresAtMs <= nowMs) return null;
  return expiresAtMs === 0 ? nowMs + ttlMs : Math.min(expiresAtMs, nowMs + 10 * ttlMs);
}
