import type { ChunkHolding } from '../directory/kv-directory.types.js';
import type { KvSourcePlan } from './route.types.js';

/**
 * The longest partial chunk of the prompt's tail that some node holds in its host or SSD tier,
 * and who holds it, looked for in `candidates` — block-key lists of the prompt's chunks, in the
 * order to try (the chunk the prompt ends in, then the one before it, which a previous turn may
 * have left partial). Null when nobody holds one.
 */
export function longestPartial(
  candidates: ReadonlyArray<readonly string[]>,
  holders: (key: string) => readonly ChunkHolding[],
): { key: string; held: readonly ChunkHolding[] } | null {
  for (const keys of candidates) {
    for (let j = keys.length - 1; j >= 0; j--) {
      const held = holders(keys[j]!).filter((h) => h.tier !== 'device');
      if (held.length > 0) return { key: keys[j]!, held };
    }
  }
  return null;
}

/**
 * Where the chosen node can fetch the partial chunk a session left (the tokens of its last turn
 * past a whole chunk, kept by the node that served it): the {@link longestPartial} one, from a
 * node that holds it. Null when the chosen node holds it itself (its own tiers find it) or nobody
 * else does. The node uses it only after every whole chunk before it, so it never restores a
 * partial chunk without its prefix.
 */
export function partialSource(
  chosen: string,
  partial: { key: string; held: readonly ChunkHolding[] } | null,
): { nodeId: string; key: string } | null {
  if (!partial || partial.held.some((h) => h.nodeId === chosen)) return null;
  return { nodeId: partial.held[0]!.nodeId, key: partial.key };
}

/** `sources` with `key` added to `nodeId`'s list (a new entry when that node had none). */
export function withPartialSource(sources: readonly KvSourcePlan[], partial: { nodeId: string; key: string }): KvSourcePlan[] {
  const at = sources.findIndex((s) => s.nodeId === partial.nodeId);
  if (at < 0) return [...sources, { nodeId: partial.nodeId, chunkKeys: [partial.key] }];
  return sources.map((s, i) => (i === at ? { nodeId: s.nodeId, chunkKeys: [...s.chunkKeys, partial.key] } : s));
}
