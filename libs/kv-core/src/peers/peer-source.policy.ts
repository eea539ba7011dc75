import { CHUNK_TOKENS } from '../keys/chunk.constants.js';

/** A node offering some of a prompt's chunks. */
export interface OfferedChunks {
  readonly chunkKeys: readonly string[];
}

/** Where a prompt's missing prefix is fetched from: the source and the positions it covers. */
export interface PeerPrefixChoice {
  /** Index into the sources. */
  readonly source: number;
  /** Chunks [first, first + chunks) of the prompt come from it. */
  readonly first: number;
  readonly chunks: number;
  /** End of the restorable positions (at most promptTokens - 1: one row computes the logits). */
  readonly until: number;
}

/**
 * The source that extends the prompt's cached prefix furthest past `fromTokens`, if it beats
 * `localUntil` (what this node's own tiers reach). KV is a prefix: a source helps only with an
 * unbroken run of the prompt's chunks starting at the first one the device lacks. Ties go to
 * the earlier source (the scheduler lists the cheapest first). `usable(i)` leaves out sources
 * that failed recently, so a failed fetch falls back to the local tiers or to recompute.
 */
export function choosePeerPrefix(
  promptKeys: readonly string[],
  promptTokens: number,
  fromTokens: number,
  localUntil: number,
  sources: readonly OfferedChunks[],
  usable: (source: number) => boolean = () => true,
): PeerPrefixChoice | null {
  const first = Math.floor(fromTokens / CHUNK_TOKENS);
  let best: PeerPrefixChoice | null = null;
  sources.forEach((s, i) => {
    if (!usable(i)) return;
    const held = new Set(s.chunkKeys);
    let n = 0;
    while (first + n < promptKeys.length && held.has(promptKeys[first + n]!)) n++;
    const until = Math.min((first + n) * CHUNK_TOKENS, promptTokens - 1);
    if (n > 0 && until > Math.max(localUntil, fromTokens) && (!best || until > best.until)) best = { source: i, first, chunks: n, until };
  });
  return best;
}
