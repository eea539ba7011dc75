import type { NodePrefix } from '../directory/kv-directory.types.js';
import type { KvSourcePlan } from '../routing/route.types.js';
import { eCacheKeys } from './e-cache.keys.js';
import type { ReusePattern } from './reuse.pattern.js';

/** The key chain routing weighs for a derived model's request, with where its chunks live. */
export interface RoutedKeys {
  readonly chain: 'own' | 'base';
  readonly chunkKeys: readonly string[];
  readonly prefixes: readonly NodePrefix[];
}

/**
 * DroidSpeak routing: a derived model D's request is routed on its base B's chunks (same tokens,
 * same tenant salt) when some node holds more of B's chain than any node holds of D's own — the
 * node's rule for reusing B's KV — so routing finds a peer holding only B's KV and stamps it in
 * `kv_sources`. Otherwise, or without a base, on D's own chain (D's own KV is exact).
 * Ties go to D's own chain.
 */
export function routeKeysFor(
  own: { chunkKeys: readonly string[]; prefixes: readonly NodePrefix[] },
  base?: { chunkKeys: readonly string[]; prefixes: readonly NodePrefix[] },
): RoutedKeys {
  const reach = (ps: readonly NodePrefix[]) => ps.reduce((m, p) => Math.max(m, p.prefixChunks), 0);
  if (base && base.chunkKeys.length > 0 && reach(base.prefixes) > reach(own.prefixes)) return { chain: 'base', ...base };
  return { chain: 'own', ...own };
}

/**
 * Transition layers of a frontier: the layers whose E cache some plan of it starts a recomputed
 * band from (`u1` where `r1 < u1 < r2`). Ascending, without duplicates.
 */
export function transitionLayers(frontier: ReadonlyArray<{ readonly pattern: ReusePattern }>): number[] {
  const layers = new Set<number>();
  for (const { pattern: p } of frontier) if (p.r1 < p.u1 && p.u1 < p.r2) layers.add(p.u1);
  return [...layers].sort((a, b) => a - b);
}

/**
 * Adds to each peer source the E-cache keys it holds for the base chunks of the prompt (from chunk
 * 0, at each transition layer), so the node can take the E cache from the peer the base's KV comes
 * from. `held` answers the KV directory's leading-prefix lookup for a key chain.
 */
export function withECacheKeys(
  sources: readonly KvSourcePlan[],
  baseKeys: readonly string[],
  layers: readonly number[],
  held: (keys: readonly string[]) => readonly NodePrefix[],
): KvSourcePlan[] {
  if (sources.length === 0 || layers.length === 0 || baseKeys.length === 0) return [...sources];
  const extra = new Map<string, string[]>();
  for (const layer of layers) {
    const keys = eCacheKeys(baseKeys, layer);
    for (const p of held(keys))
      if (p.prefixChunks > 0) extra.set(p.nodeId, [...(extra.get(p.nodeId) ?? []), ...keys.slice(0, p.prefixChunks)]);
  }
  return sources.map((s) => (extra.has(s.nodeId) ? { nodeId: s.nodeId, chunkKeys: [...s.chunkKeys, ...extra.get(s.nodeId)!] } : s));
}
