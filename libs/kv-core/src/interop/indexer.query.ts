import { BLOCK_TOKENS, BLOCKS_PER_CHUNK } from '../keys/chunk.constants.js';
import type { DirectoryTier } from '../directory/kv-directory.types.js';

/** Who holds one key, and in which tiers (whole copies only). */
export interface KeyHolding {
  readonly nodeId: string;
  readonly tiers: readonly DirectoryTier[];
}

/** One engine's answer to an indexer query (Mooncake Conductor's `/query`): matched tokens in all and per tier. */
export interface IndexerHit {
  /** Leading prompt tokens whose KV this engine holds in some tier (a prefix: the count stops at the first miss). */
  readonly longestMatched: number;
  /** Of those, the tokens held in each tier (a block held in two tiers counts in both). */
  readonly tiers: Readonly<Record<DirectoryTier, number>>;
}

/**
 * Per engine, how much of a prompt's prefix it holds: `blockKeys` are the prompt's keys at every
 * 16-token boundary (`blockKeys()` of kv-core; entry 16c+15 is chunk c's key). A holder of a chunk
 * key holds the chunk's every block; where an engine's chain stops inside a chunk, the longest
 * block key it holds there (a partial chunk, or an external engine's single blocks) ends its
 * prefix. Engines holding nothing of the first block are left out.
 */
export function indexerQuery(holdingsOf: (key: string) => readonly KeyHolding[], blockKeys: readonly string[]): Map<string, IndexerHit> {
  const hits = new Map<string, { longestMatched: number; tiers: Record<DirectoryTier, number> }>();
  const add = (h: KeyHolding, tokens: number) => {
    let hit = hits.get(h.nodeId);
    if (!hit) hits.set(h.nodeId, (hit = { longestMatched: 0, tiers: { device: 0, host: 0, ssd: 0 } }));
    hit.longestMatched += tokens;
    for (const t of new Set(h.tiers)) hit.tiers[t] += tokens;
  };
  let alive: Set<string> | null = null; // null: every engine may still match
  for (let c = 0; c * BLOCKS_PER_CHUNK < blockKeys.length; c++) {
    const blocksHere = Math.min(BLOCKS_PER_CHUNK, blockKeys.length - c * BLOCKS_PER_CHUNK);
    const whole = new Set<string>();
    if (blocksHere === BLOCKS_PER_CHUNK) {
      for (const h of holdingsOf(blockKeys[c * BLOCKS_PER_CHUNK + BLOCKS_PER_CHUNK - 1]!)) {
        if (alive !== null && !alive.has(h.nodeId)) continue;
        whole.add(h.nodeId);
        add(h, BLOCKS_PER_CHUNK * BLOCK_TOKENS);
      }
    }
    // Engines that stop inside this chunk: the longest block key each still holds here.
    const ended = new Set<string>(whole);
    for (let j = Math.min(blocksHere, BLOCKS_PER_CHUNK - 1) - 1; j >= 0; j--) {
      for (const h of holdingsOf(blockKeys[c * BLOCKS_PER_CHUNK + j]!)) {
        if (ended.has(h.nodeId) || (alive !== null && !alive.has(h.nodeId))) continue;
        ended.add(h.nodeId);
        add(h, (j + 1) * BLOCK_TOKENS);
      }
    }
    alive = whole;
    if (alive.size === 0) break;
  }
  return new Map([...hits].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
