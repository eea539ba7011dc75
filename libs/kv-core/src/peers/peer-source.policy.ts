import { BLOCK_TOKENS, BLOCKS_PER_CHUNK, CHUNK_TOKENS } from '../keys/chunk.constants.js';

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
  /** The keys to fetch, one per chunk: whole chunks' keys, the last possibly a partial chunk's. */
  readonly keys: readonly string[];
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
  /** Block keys of one chunk of the prompt (entry j: its first 16(j+1) tokens), to find partial chunks a source offers. */
  blockKeys?: (chunk: number) => readonly string[],
): PeerPrefixChoice | null {
  const first = Math.floor(fromTokens / CHUNK_TOKENS);
  let best: PeerPrefixChoice | null = null;
  sources.forEach((s, i) => {
    if (!usable(i)) return;
    const held = new Set(s.chunkKeys);
    const keys: string[] = [];
    while (first + keys.length < promptKeys.length && held.has(promptKeys[first + keys.length]!))
      keys.push(promptKeys[first + keys.length]!);
    let end = (first + keys.length) * CHUNK_TOKENS;
    // After the whole chunks, the longest partial chunk of the next one the source offers.
    const partial =
      blockKeys && end < promptTokens - 1 ? longestHeld(blockKeys(first + keys.length).slice(0, BLOCKS_PER_CHUNK - 1), held) : -1;
    if (partial >= 0) {
      keys.push(blockKeys!(first + keys.length)[partial]!);
      end += (partial + 1) * BLOCK_TOKENS;
    }
    const until = Math.min(end, promptTokens - 1);
    if (keys.length > 0 && until > Math.max(localUntil, fromTokens) && (!best || until > best.until))
      best = { source: i, first, chunks: keys.length, keys, until };
  });
  return best;
}

function longestHeld(keys: readonly string[], held: ReadonlySet<string>): number {
  for (let j = keys.length - 1; j >= 0; j--) if (held.has(keys[j]!)) return j;
  return -1;
}
