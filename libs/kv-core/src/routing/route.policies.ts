import { DEFAULT_CONDUCTOR_THRESHOLD, pickConductor } from './conductor.policy.js';
import { pickLlmd } from './llmd.policy.js';
import { pickLowest as pick, reservedLoad } from './route.load.js';
import type { RouteCandidate, RouteDecision, RouteRequest, RoutingCosts, RoutingPolicyName } from './route.types.js';
import { symphony } from './symphony.policy.js';

/**
 * Picks the node for one request under a policy; null when no candidate serves the model.
 * Every policy is deterministic (ties go to the smaller node id), so scheduler replicas agree.
 *
 * - `recompute` (vLLM-like): least loaded; KV location ignored.
 * - `sticky`: the session's previous node while it lives, else least loaded. InferCept routes so;
 *   whether the node keeps the session's KV on the device between turns or offloads it to host
 *   memory is the node's (SERVING_SYSTEMS: `infercept` and `sticky-device`).
 * - `prefix-affinity` (pure prefix routing): the longest cached prefix wins, load only breaks
 *   ties; a prompt everyone shares therefore pins traffic to its first holder. A labelled extra:
 *   no production router weighs prefix alone.
 * - `llmd`: llm-d's default profile — prefix-cache, queue and KV-utilization scores weighed
 *   3 : 2 : 2, the highest total wins (llmd.policy.ts).
 * - `symphony`: the lowest estimated time to first token, with hysteresis around a session's
 *   reservation and home (symphony.policy.ts).
 * - `conductor`: Mooncake's Algorithm 1 — the smallest queue + transfer + prefill, a peer's longer
 *   prefix fetched past `conductorThreshold` times the node's own (conductor.policy.ts).
 */
export function route(
  policy: RoutingPolicyName,
  nodes: readonly RouteCandidate[],
  req: RouteRequest,
  costs: RoutingCosts,
): RouteDecision | null {
  const serving = nodes.filter((n) => n.models.includes(req.model));
  if (serving.length === 0) return null;
  const least = () => pick(serving, (n) => reservedLoad(n, costs), costs);
  const decide = (nodeId: string, reason: RouteDecision['reason']): RouteDecision => ({ nodeId, reason, kvSources: [], estimateMs: 0 });
  switch (policy) {
    case 'recompute':
      return decide(least().nodeId, 'least_loaded');
    case 'sticky': {
      const home = serving.find((n) => n.nodeId === req.sessionHome);
      return home ? decide(home.nodeId, 'session_home') : decide(least().nodeId, 'least_loaded');
    }
    case 'prefix-affinity': {
      const depth = new Map(req.prefixes.map((p) => [p.nodeId, p.prefixChunks]));
      const best = Math.max(0, ...serving.map((n) => depth.get(n.nodeId) ?? 0));
      if (best === 0) return decide(least().nodeId, 'least_loaded');
      const holders = serving.filter((n) => depth.get(n.nodeId) === best);
      return decide(pick(holders, (n) => reservedLoad(n, costs), costs).nodeId, 'longest_prefix');
    }
    case 'llmd':
      return decide(pickLlmd(serving, req.chunkKeys.length, req.prefixes, costs)!.nodeId, 'scored');
    case 'symphony':
      return symphony(serving, req, costs);
    case 'conductor':
      return pickConductor(serving, req, costs, { threshold: costs.conductorThreshold ?? DEFAULT_CONDUCTOR_THRESHOLD })!.decision;
  }
}
