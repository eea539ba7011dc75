import { CHUNK_TOKENS } from '../keys/chunk.constants.js';
import type { RoutingCosts } from './route.types.js';

/**
 * Prefilling a prompt's chunks [from, to) (fractions allowed: a partial chunk) when the chunks
 * before `from` are already in the cache, ms: each chunk costs the per-chunk recompute figure plus
 * the attention figure per chunk of context it attends over, so the whole span costs
 * r·(to − from) + a·(to² − from²)/2 — a prefill's quadratic term, which a per-chunk price misses
 * by half at 60K tokens on an A100 (the twin's roofline).
 */
export function recomputeSpanMs(
  costs: Pick<RoutingCosts, 'recomputeMsPerChunk' | 'attentionMsPerChunkPair'>,
  from: number,
  to: number,
): number {
  if (!(to > from)) return 0;
  const a = costs.attentionMsPerChunkPair ?? 0;
  return costs.recomputeMsPerChunk * (to - from) + (a * (to * to - from * from)) / 2;
}

/**
 * The attention work of prefilling a prompt past its cached tokens, in chunk pairs (token pairs ÷
 * CHUNK_TOKENS²): each computed token attends over the tokens before it and itself — the feature
 * PassCostModel fits the attention figure on.
 */
export function attentionChunkPairs(promptTokens: number, cachedTokens: number): number {
  const cached = Math.max(0, Math.min(promptTokens, cachedTokens));
  const fresh = Math.max(0, promptTokens - cached);
  return (fresh * cached + (fresh * (fresh + 1)) / 2) / (CHUNK_TOKENS * CHUNK_TOKENS);
}
