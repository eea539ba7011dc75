export { ReferenceEngine, type ReferenceEngineOptions } from './reference.engine.js';
export type { StepItem, StepOptions, SeqStepResult } from './model.runtime.js';
export { forwardStepShape, type ForwardStep } from './forward.step.js';
export type { KvRange } from './paged-kv.cache.js';
export type { PartialPrefillRequest } from './partial-prefill.runner.js';
export { PairEvaluator, syntheticPrompts, type PatternMeasure } from './pair.evaluator.js';
// Reuse-pattern policy lives in kv-core (ARCHITECTURE.md §2); re-exported for engine users.
export { planReuse, recomputeAll, validateReusePattern, type ReusePattern, type ReusePlan, type LayerAction } from '@mnemo/kv-core';
export { emptyStats, type EngineStats, type LayerHooks } from './layer-hooks.js';
export { TokenSampler, argmax } from './token.sampler.js';
export { resolveWeights } from './weights.resolver.js';
export { DeviceModel } from './device-model.js';
export { ModelRuntime } from './model.runtime.js';
export {
  LayerStreamCache,
  DeviceRegionBacking,
  HostBacking,
  StreamedSequences,
  type LayerStreamSettings,
  type LayerStreamOptions,
  type LayerStreamStats,
  type LayerKvBacking,
  type BackingTier,
} from './layer-stream/index.js';
export { KvSwapper, type SwapOptions, type SwapStats } from './kv.swapper.js';
export { KvSwapSpace, type HostKvCopy } from './kv-swap.space.js';
