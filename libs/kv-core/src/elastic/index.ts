export {
  blockElements,
  layerBlockElements,
  gcd,
  lcm,
  minimumElasticUnit,
  layerStreamSplit,
  streamedContextPlan,
  type StreamedContextPlan,
  type KvShape,
  type ElasticUnit,
  type LayerStreamSplit,
} from './elastic-unit.math.js';
export { scaleUp, scaleDown, NO_STEP, type ScaleStep } from './elastic-scaling.policy.js';
export { DemandWindow } from './demand.window.js';
export { SessionDemand, type LiveDemand } from './session.demand.js';
export {
  layerStreamLimit,
  planStreamStart,
  routeContext,
  streamPlaneBlocks,
  type ContextRoute,
  type LayerStreamShape,
  type StreamStartPlan,
} from './layer-stream.policy.js';
export {
  ElasticCacheCoordinator,
  type ElasticModelSpec,
  type ElasticMember,
  type ElasticModelState,
  type ReclaimResult,
} from './elastic-cache.coordinator.js';
