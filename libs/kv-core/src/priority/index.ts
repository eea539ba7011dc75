export { FairPriorityRanker, DEFAULT_FAIRNESS, type FairnessOptions } from './fair-priority.ranker.js';
export { planPriorityIteration } from './priority.planner.js';
