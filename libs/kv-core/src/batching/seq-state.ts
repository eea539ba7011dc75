/** What the iteration planner knows about one sequence. */
export interface SeqState {
  id: string;
  /**
   * Tokens its admission computes: the prompt after prefix-cache hits (a new request) or the
   * history to rebuild (a preempted one). Only used for waiting sequences.
   */
  promptTokens: number;
  /** Higher runs first. */
  priority: number;
  /** Monotonic arrival counter; lower arrived earlier. */
  arrivalSeq: number;
  /** The KV pool (the model) its blocks come from; needed when memory is planned. */
  pool?: string;
  /** Device KV blocks its next step takes: admission (waiting) or one decode step (running). */
  blocks?: number;
  /** Running only: blocks that preempting it frees at least (the ones no other sequence holds). */
  freeable?: number;
}

export interface IterationInput {
  running: readonly SeqState[];
  waiting: readonly SeqState[];
  /** Most sequences in one iteration (decode + prefill). */
  maxBatch: number;
  /** Most prompt tokens prefilled in one iteration. */
  maxPrefillTokens: number;
  /**
   * Device KV blocks each pool can hand out now. When given, the plan never asks for more
   * blocks than this: it preempts running sequences to let the others decode, and admits
   * waiting ones only while their blocks fit.
   */
  kvAvailable?: Readonly<Record<string, number>>;
  /**
   * A waiting prompt that would compute more than a chunk and more than the pass has admitted so far
   * waits for the next pass, which it leads, and later shorter prompts go ahead of it now. Every prompt in a pass
   * gets its first token when the whole pass ends, so without this a turn of a few hundred tokens
   * queued just ahead of a long prompt waits for that prompt's compute too (the multi-round tail).
   * The long prompt loses at most the short pass it let go first. Off: strict FCFS.
   */
  holdLongPrompts?: boolean;
}

export interface IterationPlan {
  /** Waiting sequences admitted this iteration, in admission order. */
  prefill: string[];
  /** Running sequences that decode one token this iteration, in priority order. */
  decode: string[];
  /** Running sequences whose device KV is dropped first (recomputed when they are admitted again), worst first. */
  preempt: string[];
}
