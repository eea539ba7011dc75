/**
 * The contract between the node-manager and any engine (sim, reference, or an
 * external one). The node-manager's iteration-level scheduler decides *which*
 * sequences prefill or decode in an iteration; the engine only executes.
 *
 * Lifecycle of a sequence: prefill (once, may carry a cached prefix later) →
 * decode (one token per call, batched with other running sequences) →
 * release (finished, cancelled or preempted-and-dropped). An engine must accept
 * release() of an unknown or already-released id as a no-op.
 */

export type EngineKind = 'sim' | 'reference';

export interface SamplingParams {
  /** 0 means greedy (argmax). */
  readonly temperature: number;
  readonly topP: number;
  /** Seed for this sequence's sampler; the same seed and inputs give the same tokens. */
  readonly seed: number;
}

export interface ServedModel {
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
}

export interface TokenOutput {
  readonly seqId: string;
  readonly token: number;
}

export interface Engine {
  readonly kind: EngineKind;
  models(): readonly ServedModel[];
  /** Runs the prompt of each input as one batch and returns each sequence's first sampled token. */
  prefill(batch: readonly PrefillInput[]): Promise<TokenOutput[]>;
  /** One decode step for each listed (already prefilled) sequence, batched. */
  decode(seqIds: readonly string[]): Promise<TokenOutput[]>;
  /**
   * Share of the engine's KV capacity that live sequences hold, 0 (empty) … 1 (full), over
   * all its models. Heartbeats carry it; routing steers new work away from full caches.
   */
  kvUsage(): number;
  /** Frees everything held for the sequence. Idempotent. */
  release(seqId: string): void;
  /** Frees everything the engine holds. */
  close(): Promise<void>;
}
