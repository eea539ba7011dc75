export type { NodeLoad } from './node-load.js';
export { KV_USAGE_WEIGHT, loadScore, pickLeastLoaded, expiredNodes } from './least-loaded.policy.js';
export { route, estimate, reservedLoad } from './route.policies.js';
export {
  ROUTING_POLICIES,
  DEFAULT_ROUTING_COSTS,
  type RoutingPolicyName,
  type RouteCandidate,
  type RouteRequest,
  type RouteReason,
  type RouteDecision,
  type KvSourcePlan,
  type RoutingCosts,
} from './route.types.js';
export { PrefillBacklog } from './prefill.backlog.js';
export { longestPartial, partialSource, withPartialSource } from './partial-source.policy.js';
