export type { NodeLoad, MeasuredCosts } from './node-load.js';
export { reportedPrefillMs } from './node-load.js';
export { KV_USAGE_WEIGHT, loadScore, pickLeastLoaded, expiredNodes } from './least-loaded.policy.js';
export { route } from './route.policies.js';
export { estimate, estimateParts, symphony } from './symphony.policy.js';
export { costsOf } from './node.costs.js';
export { PassCostModel, type PrefillPass, type PassCostOptions } from './pass-cost.model.js';
export { reservedLoad, pickLowest, batchSlotWaitMs } from './route.load.js';
export { BatchSlotMeter } from './batch-slot.meter.js';
export { NodeCostMeters, type StartingSeq } from './node-cost.meters.js';
export { LLMD_DEFAULT_WEIGHTS, llmdScores, llmdQueue, pickLlmd, type LlmdScore, type LlmdWeights } from './llmd.policy.js';
export {
  ROUTING_POLICIES,
  DEFAULT_ROUTING_COSTS,
  type RoutingPolicyName,
  type RouteCandidate,
  type RouteRequest,
  type RouteReason,
  ROUTE_REASONS,
  type CandidateEstimate,
  type RouteDecision,
  type KvSourcePlan,
  type RoutingCosts,
} from './route.types.js';
export { PrefillBacklog } from './prefill.backlog.js';
export { attentionChunkPairs, recomputeSpanMs } from './prefill.cost.js';
export {
  conductorEstimates,
  pickConductor,
  DEFAULT_CONDUCTOR_THRESHOLD,
  type ConductorOptions,
  type ConductorEstimate,
  type ConductorChoice,
} from './conductor.policy.js';
export { longestPartial, partialSource, withPartialSource } from './partial-source.policy.js';
export {
  SERVING_SYSTEMS,
  cachedBlocksBetweenTurns,
  servingSystemProblems,
  type ServingSystem,
  type ServingSystemName,
  type BetweenTurns,
} from './serving.systems.js';
export {
  planRoute,
  planAdvisory,
  routePrefillMs,
  routeRestoreMs,
  type RoutingState,
  type RoutedRequest,
  type PlannedRoute,
  type AdvisoryAsk,
  type AdvisoryPlan,
} from './request.router.js';
