import { KV_USAGE_WEIGHT, loadScore } from './least-loaded.policy.js';
import { kvUsageOf } from './node-load.js';
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
 * How long a new request waits on `n` before its prefill starts, ms, as the policies that estimate
 * time to first token price it (symphony, conductor): the requests queued ahead of it (waiting, and
 * reservations at their weight) at `queueMsPerRequest` each, KV pressure in the same units, the
 * prefill backlog the scheduler sent there, and the wait for a slot when the batch is full.
 * Sequences already decoding are not ahead of it: continuous batching admits it between two
 * iterations, so they delay it by a step, not by a request each; only a full batch makes it wait
 * for them (batchSlotWaitMs). Priced at a request each, a home with a few more decoding sessions
 * looked 80–120 ms slower than a neighbour, and a third of the live multiround's turns moved,
 * paying a peer pull for a wait that was not there (moved turns' p50 71 ms, staying ones' 28 ms).
 */
export function queueAheadMs(n: RouteCandidate, costs: RoutingCosts): number {
  const ahead = Math.max(0, n.waiting) + costs.reservationWeight * n.reservations + KV_USAGE_WEIGHT * kvUsageOf(n);
  return costs.queueMsPerRequest * ahead + Math.max(0, n.backlogMs ?? 0) + batchSlotWaitMs(n, costs);
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
