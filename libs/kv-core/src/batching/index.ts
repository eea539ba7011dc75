export type { SeqState, IterationInput, IterationPlan } from './seq-state.js';
export { planIteration, compareSeqs } from './iteration.planner.js';
export {
  nodeIterationInput,
  planNodeIteration,
  admissionKinds,
  admissionComputeTokens,
  resumeComputeTokens,
  queuedPrefill,
  type QueuedPrefill,
  tickRanker,
  type NodeSeq,
  type NodeKvView,
  type AdmissionView,
  type NodeIterationOptions,
  type AdmissionKinds,
} from './node-iteration.planner.js';
