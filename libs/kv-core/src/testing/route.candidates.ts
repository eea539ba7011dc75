import type { DirectoryTier, NodePrefix } from '../directory/kv-directory.types.js';
import type { RouteCandidate, RoutingCosts } from '../routing/route.types.js';

/** An idle candidate serving model `m`, with `over` on top (routing specs). Spec support only; not exported. */
export const candidate = (nodeId: string, over: Partial<RouteCandidate> = {}): RouteCandidate => ({
  nodeId,
  models: ['m'],
  running: 0,
  waiting: 0,
  kvUsage: 0,
  lastSeenMs: 0,
  reservations: 0,
  ...over,
});

/** A node holding the request's leading chunks in these tiers, one per chunk. */
export const heldIn = (nodeId: string, ...tiers: DirectoryTier[]): NodePrefix => ({ nodeId, prefixChunks: tiers.length, tiers });

/** Costs with round numbers, so each table row can be checked by hand. */
export const ROUND_COSTS: RoutingCosts = {
  queueMsPerRequest: 20,
  reservationWeight: 0.5,
  recomputeMsPerChunk: 16,
  loadMsPerChunk: { device: 0, host: 2, ssd: 6 },
  peerMsPerChunk: 3,
  moveMarginMs: 0,
};
