export type { SeqState, IterationInput, IterationPlan } from './seq-state.js';
export { planIteration, compareSeqs } from './iteration.planner.js';
