import { loadScore } from './least-loaded.policy.js';
import type { RouteCandidate, RoutingCosts } from './route.types.js';

/**
 * Load with reservations counted at their weight and the prefill backlog in queued-request units:
 * what "least loaded" means everywhere here, baselines included.
 */
export function reservedLoad(n: RouteCandidate, costs: RoutingCosts): number {
  const backlog = costs.queueMsPerRequest > 0 ? (n.backlogMs ?? 0) / costs.queueMsPerRequest : 0;
  return loadScore(n) + costs.reservationWeight * n.reservations + backlog;
}

/**
 * Waiting for a slot in a full batch, ms: with `maxBatch` sequences running and more queued, a
 * new request waits for one to finish per request ahead of it past the last slot — a cliff a
 * linear per-request queue price does not see (a node with one slot left starts it at once).
 * 0 where the node has not reported its batch size or measured its slot time.
 */
export function batchSlotWaitMs(n: RouteCandidate, costs: RoutingCosts): number {
  const slot = n.costs?.slotMs;
  if (!n.maxBatch || !(slot !== undefined && Number.isFinite(slot) && slot > 0)) return 0;
  const ahead = n.running + n.waiting + costs.reservationWeight * n.reservations;
  return Math.max(0, ahead + 1 - n.maxBatch) * slot;
}

/** Lowest score; ties to the lower load, then the smaller node id (code-unit order), so scheduler replicas agree. */
export function pickLowest<T extends RouteCandidate>(nodes: readonly T[], score: (n: T) => number, costs: RoutingCosts): T {
  let best = nodes[0]!;
  let bestScore = score(best);
  for (const n of nodes.slice(1)) {
    const s = score(n);
    const tie =
      s === bestScore &&
      (reservedLoad(n, costs) < reservedLoad(best, costs) ||
        (reservedLoad(n, costs) === reservedLoad(best, costs) && n.nodeId < best.nodeId));
    if (s < bestScore || tie) {
      best = n;
      bestScore = s;
    }
  }
  return best;
}
