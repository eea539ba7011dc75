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
