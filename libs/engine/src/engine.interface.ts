import { ErrorCode, MnemoError, seedPromptLength, type DeviceChunkEvent } from '@mnemo/kv-core';
import type { CrossModelPlan, KvRestorePlan } from './engine.restore.js';
import type { EngineLayerStream, KvStaging } from './engine.staging.js';
import type { KvBudget, KvSwap } from './engine.swap.js';
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
  /**
   * Failover continuation (kv-core `planContinuation`): draws an earlier run of this sequence
   * made. The prompt's last `drawOffset` tokens are what those draws gave; the sampler is seeded
   * as for the prompt before them and skips as many draws, so it samples what that run would
   * have sampled next. 0 or absent: an ordinary sequence. Must be < the prompt length.
   */
  readonly drawOffset?: number;
}

/** An input's draw offset is a count of its prompt tokens, at least one left (InvalidRequest otherwise). */
export function checkDrawOffset(input: {
  readonly seqId: string;
  readonly tokens: readonly number[];
  readonly sampling: SamplingParams;
}): void {
  const offset = input.sampling.drawOffset ?? 0;
  if (seedPromptLength(input.tokens.length, offset) === null) {
    throw new MnemoError(
      ErrorCode.InvalidRequest,
      `sequence ${input.seqId}: drawOffset ${offset} must be an integer in [0, ${input.tokens.length})`,
    );
  }
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
  /**
   * Prefix-cache scope (the tenant): a sequence reuses cached KV of, and leaves its own for,
   * sequences of the same model under the same salt. Absent: it neither reuses nor shares.
   */
  readonly cacheSalt?: string;
  /**
   * Where KV the device does not hold may come from (the node's KV store): asked once the
   * device-cached prefix is attached, with its length in tokens (a block boundary).
   */
  readonly restore?: (deviceTokens: number) => KvRestorePlan | undefined;
  /**
   * DroidSpeak cross-model reuse: asked first, with the device-cached prefix length of this
   * model under `cacheSalt`; a plan makes the prompt's prefix a partial prefill over another
   * (base) model's KV. Engines that cannot do it ignore it (the prefill is then ordinary).
   */
  readonly crossModel?: (deviceTokens: number) => CrossModelPlan | undefined;
  /**
   * Layers whose hidden state entering them (the DroidSpeak E cache) to return for every prompt
   * position, when the whole prompt is computed (nothing came from a cache); engines that cannot ignore it.
   */
  readonly captureE?: readonly number[];
  /**
   * Serve this sequence through the engine's layer stream cache (see {@link EngineLayerStream}),
   * with every block of a context of `contextBlocks` taken at once; it then decodes alone.
   */
  readonly layerStream?: { readonly contextBlocks: number };
}

export * from './engine.restore.js';
export * from './engine.swap.js';
export * from './engine.staging.js';

export interface TokenOutput {
  readonly seqId: string;
  readonly token: number;
  /** Prefill only: prompt tokens whose KV came from a cache (device or restored) instead of compute. */
  readonly cachedTokens?: number;
  /** Prefill only: the part of cachedTokens restored from another tier. */
  readonly restoredTokens?: number;
  /** Prefill only: the cross-model plan this prefill ran (its `until` positions reused the base's KV). */
  readonly crossModel?: { readonly baseModel: string; readonly pattern: CrossModelPlan['pattern']; readonly reusedTokens: number };
  /** Prefill only, when `captureE` was asked and the whole prompt computed: layer → `[token][d_model]`. */
  readonly eCache?: ReadonlyMap<number, Float32Array>;
}

/**
 * A whole chunk's KV (256 tokens, all layers) appeared on or left an engine's device cache, or a
 * sequence let go of an incomplete last chunk (`partial`: its first `tokens` positions, whole
 * blocks, named `key`; exportable only while the listener runs). `superseded`: keys of shorter
 * prefixes of the same chunk that this one covers. The ledger's event, named with its model.
 */
export type EngineChunkEvent = DeviceChunkEvent & { readonly model: string };

export interface Engine {
  readonly kind: EngineKind;
  /** Present when the engine can serve contexts beyond its device cache by layer streaming. */
  readonly layerStream?: EngineLayerStream;
  /** Present when the engine can preempt by swapping (see {@link KvSwap}). */
  readonly swap?: KvSwap;
  /** Present when the engine can take prefetched chunks onto its device ahead of their request (see {@link KvStaging}). */
  readonly staging?: KvStaging;
  models(): readonly ServedModel[];
  /**
   * Runs the prompt of each input as one batch and returns each sequence's first sampled token.
   * A sequence whose restore fails with DataLoss (a peer past its chunk deadline, a corrupt
   * copy) is released, its plan told `done(false)`, and left out of the outputs; the pass goes
   * on for the others, so one hung source costs the batch at most its deadline, never the pass.
   */
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
  /**
   * Tells `listener` (synchronously, right after the pass that completed it) of every whole
   * chunk a sharing sequence writes, and of chunks the device later drops. Returns an unsubscribe.
   */
  watchChunks(listener: (e: EngineChunkEvent) => void): () => void;
  /**
   * KV of chunk `chunk` (tokens [256·chunk, 256·chunk + 256)) of a sequence, in the chunk payload
   * layout `[layer][K|V][token][kv_head][head_dim]`; undefined when this engine keeps no KV bytes.
   * With `tokens` < 256 (a `partial` chunk event) only the first `tokens` rows are the sequence's;
   * the payload keeps the whole chunk's layout and the other rows are zero. With `into` (exactly
   * one chunk payload long) the payload is written there and `into` returned: a caller reusing its
   * buffers spares the pass's commit path a fresh multi-MiB array (page faults and zeroing).
   */
  exportChunk(seqId: string, chunk: number, tokens?: number, into?: Float32Array): Float32Array | undefined;
  /** Layers and K/V row width (kv_heads · head_dim) of a model's KV, or undefined when this engine keeps no KV bytes. */
  kvLayout(model: string): { readonly layers: number; readonly rowElems: number } | undefined;
  /** Width of a model's hidden state (d_model, the row of an E cache); undefined when this engine returns no E caches. */
  hiddenSize?(model: string): number | undefined;
  /** Frees everything held for the sequence. Idempotent. */
  release(seqId: string): void;
  /** Frees everything the engine holds. */
  close(): Promise<void>;
}
