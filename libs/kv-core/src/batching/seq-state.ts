/** What the iteration planner knows about one sequence. */
export interface SeqState {
  id: string;
  /** Prompt tokens still to prefill (after prefix-cache hits); only used for waiting sequences. */
  promptTokens: number;
  /** Higher runs first. */
  priority: number;
  /** Monotonic arrival counter; lower arrived earlier. */
  arrivalSeq: number;
}

export interface IterationInput {
  running: readonly SeqState[];
  waiting: readonly SeqState[];
  /** Most sequences in one iteration (decode + prefill). */
  maxBatch: number;
  /** Most prompt tokens prefilled in one iteration. */
  maxPrefillTokens: number;
}

export interface IterationPlan {
  /** Waiting sequences admitted this iteration, in admission order. */
  prefill: string[];
  /** Running sequences that decode one token this iteration, in priority order. */
  decode: string[];
}
