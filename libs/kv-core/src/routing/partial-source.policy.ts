import type { ChunkHolding } from '../directory/kv-directory.types.js';
import type { KvSourcePlan } from './route.types.js';

/**
 * Where the chosen node can fetch the partial chunk a session left (the tokens of its last turn
 * past a whole chunk, kept by the node that served it): the longest one another node holds in
 * its host or SSD tier, looked for in `candidates` — block-key lists of the prompt's chunks, in
 * the order to try (the chunk the prompt ends in, then the one before it, which a previous turn
 * may have left partial). Null when the chosen node holds it itself (its own tiers find it) or
 * nobody else does. The node uses it only after every whole chunk before it, so it never
 * restores a partial chunk without its prefix.
 */
export function partialSource(chosen: string, candidates: ReadonlyArray<readonly string[]>, holders: (key: string) => readonly ChunkHolding[]): { nodeId: string; key: string } | null {
  for (const keys of candidates) {
    for (let j = keys.length - 1; j >= 0; j--) {
      const held = holders(keys[j]!).filter((h) => h.tier !== 'device');
      if (held.length === 0) continue;
      if (held.some((h) => h.nodeId === chosen)) return null;
      return { nodeId: held[0]!.nodeId, key: keys[j]! };
    }
  }
  return null;
}

/** `sources` with `key` added to `nodeId`'s list (a new entry when that node had none). */
export function withPartialSource(sources: readonly KvSourcePlan[], partial: { nodeId: string; key: string }): KvSourcePlan[] {
  const at = sources.findIndex((s) => s.nodeId === partial.nodeId);
  if (at < 0) return [...sources, { nodeId: partial.nodeId, chunkKeys: [partial.key] }];
  return sources.map((s, i) => (i === at ? { nodeId: s.nodeId, chunkKeys: [...s.chunkKeys, partial.key] } : s));
}
