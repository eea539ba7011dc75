export { FairPriorityRanker, DEFAULT_FAIRNESS, type FairnessOptions } from './fair-priority.ranker.js';
export { planPriorityIteration } from './priority.planner.js';
export { SwapInPolicy, DEFAULT_SWAP_IN, SWAP_IN_MODES, type SwapInMode, type SwapInPolicyOptions } from './swap-in.policy.js';
export { PendingSwapIns } from './pending-swap-in.queue.js';
