/**
 * The contract between the node-manager and any engine (sim, reference, or an
 * external one). The node-manager's iteration-level scheduler decides *which*
 * sequences prefill or decode in an iteration; the engine only executes.
 *
 * Lifecycle of a sequence: prefill (once; reuses the device prefix cache) →
 * decode (one token per call, batched with other running sequences), possibly
 * interrupted by preempt (device KV dropped when memory runs out) and resume
 * (KV rebuilt) → release (finished or cancelled). An engine must accept release()
 * of an unknown or already-released id as a no-op.
 *
 * Device KV memory is counted in blocks of 16 tokens per model; the node-manager plans
 * admissions and preemptions with kvBudget / prefillBlocks / decodeBlocks so that no
 * engine call runs out of blocks.
 */

export type EngineKind = 'sim' | 'reference';

export interface SamplingParams {
  /** 0 means greedy (argmax). */
  readonly temperature: number;
  readonly topP: number;
  /** Seed for this sequence's sampler; the same seed and inputs give the same tokens. */
  readonly seed: number;
}

export interface ModelInfo {
  readonly id: string;
  readonly engine: EngineKind;
  readonly vocabSize: number;
  readonly maxContext: number;
  readonly eosTokenId: number;
}

export interface PrefillInput {
  readonly seqId: string;
  readonly model: string;
  readonly tokens: readonly number[];
  readonly sampling: SamplingParams;
  /**
   * Prefix-cache scope (the tenant): a sequence reuses cached KV of, and leaves its own for,
   * sequences of the same model under the same salt. Absent: it neither reuses nor shares.
   */
  readonly cacheSalt?: string;
}

export interface TokenOutput {
  readonly seqId: string;
  readonly token: number;
  /** Prefill only: prompt tokens whose KV came from the device prefix cache. */
  readonly cachedTokens?: number;
}

/** One model's device KV memory, in blocks of 16 tokens. */
export interface KvBudget {
  readonly capacity: number;
  /** Blocks an allocation can take now: free ones plus cached ones nobody holds (reclaimed on demand). */
  readonly available: number;
}

export interface Engine {
  readonly kind: EngineKind;
  models(): readonly ModelInfo[];
  /** Runs the prompt of each input as one batch and returns each sequence's first sampled token. */
  prefill(batch: readonly PrefillInput[]): Promise<TokenOutput[]>;
  /** One decode step for each listed (already prefilled) sequence, batched. */
  decode(seqIds: readonly string[]): Promise<TokenOutput[]>;
  /**
   * Share of the engine's KV capacity that live sequences hold, 0 (empty) … 1 (full), over
   * all its models. Heartbeats carry it; routing steers new work away from full caches.
   */
  kvUsage(): number;
  kvBudget(model: string): KvBudget;
  /** Blocks prefilling `input` would take now, after device prefix-cache hits; reserves nothing. */
  prefillBlocks(input: PrefillInput): number;
  /** Prompt tokens of `input` the device prefix cache holds now (whole blocks; at least one token is left to compute). */
  cachedTokens(input: PrefillInput): number;
  /** Blocks one decode step of these (running) sequences takes. */
  decodeBlocks(seqIds: readonly string[]): number;
  /** Blocks only this sequence holds: what preempting it frees at least. */
  exclusiveBlocks(seqId: string): number;
  /**
   * Drops a running sequence's device KV (blocks of shared content stay cached) but keeps what it
   * needs to go on — its tokens, its sampler state and the token to decode next.
   */
  preempt(seqId: string): void;
  /** Blocks {@link resume} of this preempted sequence would take now. */
  resumeBlocks(seqId: string): number;
  /** Rebuilds the KV of preempted sequences (prefix-cache hits make it cheaper); they decode again after. */
  resume(seqIds: readonly string[]): Promise<void>;
  /** Frees everything held for the sequence. Idempotent. */
  release(seqId: string): void;
  /** Frees everything the engine holds. */
  close(): Promise<void>;
}
