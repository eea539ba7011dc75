import { ErrorCode, MnemoError, seedPromptLength, type ChunkContent } from '@mnemo/kv-core';
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

/**
 * Prompt positions [0, until) prefilled under a reuse pattern (recompute [0, r1) and
 * [u1, r2), reuse the base's KV elsewhere) with `load(layer)` giving the base model's KV of
 * those positions; the rest of the prompt is then computed normally. A declared
 * approximation: the engine keeps such a sequence out of prefix sharing (its KV is not the
 * model's own), so nothing it computes is ever served as this model's cached KV.
 */
export interface CrossModelPlan {
  readonly baseModel: string;
  readonly pattern: { readonly r1: number; readonly u1: number; readonly r2: number };
  /** End of the reused positions; at most the prompt length - 1. */
  readonly until: number;
  /** The base's KV of one reused layer for positions [0, until), layout `[K|V][token][kv_head][head_dim]`. */
  load(layer: number): Promise<Float32Array>;
  /** The base's hidden state entering `layer` for [0, until) (`[token][d_model]`); needed when the pattern has a transition layer. */
  loadE?(layer: number): Promise<Float32Array>;
  /** Called once after the pass, whatever happened. */
  done?(ok: boolean): void;
}

/**
 * Where one layer of a restore goes in an engine's host-resident KV memory: the K row of position
 * `from + i` at byte `kOffsets[i]` of `buffer`, its V row at `vOffsets[i]`, each `rowBytes` long.
 * Rows of consecutive positions within a block are adjacent, so a plan can copy runs of them.
 * A negative offset leaves that row out (the engine holds it already, in a shared block).
 */
export interface KvRestoreTarget {
  readonly buffer: ArrayBuffer;
  readonly kOffsets: Float64Array;
  readonly vOffsets: Float64Array;
  readonly rowBytes: number;
}

/**
 * KV of prompt positions [deviceTokens, until) brought back from another tier, layer by layer
 * while the pass computes: `load(l)` is started while layer l-1 runs and awaited just before
 * layer l, so only the part compute did not hide is blocked time. A rejected load fails the
 * prefill and nothing of it is kept (a corrupt copy is a miss, never wrong tokens).
 */
export interface KvRestorePlan {
  /** End of the restored positions; at most the prompt length - 1 (one row computes the logits). */
  readonly until: number;
  /**
   * Layer `layer` of the restored positions, chunk payload layout `[K|V][token][kv_head][head_dim]`.
   * The array may be reused by the plan: it stays valid until the load of layer `layer + 2`
   * (engines import each layer before they ask for the next).
   */
  load(layer: number): Promise<Float32Array>;
  /**
   * Optional: copies layer `layer` of the restored positions straight into the engine's KV memory
   * where that memory is host memory (the CPU backend), so there is no payload to copy again.
   * Resolves once every row is written and checked, as {@link load} does.
   */
  loadInto?(layer: number, target: KvRestoreTarget): Promise<void>;
  /**
   * Called once after the pass, whatever happened, so the plan can let go of what it holds;
   * `blockedMs` is how long the pass waited on loads after its compute ran out (blocked I/O).
   */
  done?(ok: boolean, blockedMs?: number): void;
  /** Optional: where the restored positions come from, in tokens (for records and traces; read before `done`). */
  sources?(): RestoreSources;
}

/** Tokens of a restore by where they are read: this node's host and SSD pools, or another node. */
export interface RestoreSources {
  readonly host: number;
  readonly ssd: number;
  readonly peer: number;
  /** The node (its gRPC address) a peer restore reads from. */
  readonly peerAddress?: string;
}

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
 * prefixes of the same chunk that this one covers.
 */
export type EngineChunkEvent =
  | ({
      readonly kind: 'written';
      readonly model: string;
      readonly key: string;
      readonly seqId: string;
      readonly chunk: number;
      readonly superseded: readonly string[];
    } & ChunkContent)
  | ({
      readonly kind: 'partial';
      readonly model: string;
      readonly key: string;
      readonly seqId: string;
      readonly chunk: number;
      readonly tokens: number;
      readonly superseded: readonly string[];
    } & ChunkContent)
  | { readonly kind: 'evicted'; readonly model: string; readonly key: string };

/** One model's device KV memory, in blocks of 16 tokens. */
export interface KvBudget {
  readonly capacity: number;
  /** Blocks an allocation can take now: free ones plus cached ones nobody holds (reclaimed on demand). */
  readonly available: number;
}

/** What one swap call moved. */
export interface SwapReport {
  /** Sequences whose KV moved; a swap-out leaves out those the host swap space had no room for. */
  readonly seqIds: readonly string[];
  readonly blocks: number;
  readonly bytes: number;
  /** Copies issued (one per range handed to the copy workers). */
  readonly copies: number;
  readonly ms: number;
  /** Swap-out: blocks left out of the copy because host memory outside the swap space keeps them (SwapHostCopies). */
  readonly heldBlocks?: number;
}

/**
 * Swap preemption (FastSwitch): a preempted sequence's KV is copied to host memory and back
 * instead of recomputed. Engines whose KV is not in memory the copy workers can reach leave it out.
 */
export interface KvSwap {
  /** `grouped`: block groups and group-sized copies, host copies reused; `per-block`: vLLM-style copies, nothing reused. */
  readonly granularity: 'grouped' | 'per-block';
  /**
   * Whether a copy runs beside compute without taking its resources (a GPU's copy engines), so
   * an asynchronous swap-in hides its copy behind other sequences' compute; false where copies
   * and compute share the same cores.
   */
  readonly overlapsCompute: boolean;
  /**
   * Copies running sequences' KV to host memory, then frees their device blocks (held until the
   * copy completes, so nobody can be handed a block still being read). They are then preempted
   * and come back by {@link swapIn}; those the host space cannot take are left running.
   */
  swapOut(seqIds: readonly string[]): Promise<SwapReport>;
  /**
   * Takes device blocks for swapped-out sequences (as many as resumeBlocks says; device
   * prefix-cache hits are attached, not copied) and copies their KV back; they decode once it
   * settles. Released meanwhile: its blocks are freed when the copy ends.
   */
  swapIn(seqIds: readonly string[]): Promise<SwapReport>;
  isSwapped(seqId: string): boolean;
  /** Host bytes the swapped-out (and reusable) copies take. */
  hostBytes(): number;
  /**
   * Host memory that already keeps whole chunks of KV (the node's KV store host pool): a
   * swap-out leaves the chunks it holds out of the swap copy and a swap-in copies them back
   * from there, so one host copy serves both. Absent: every block goes to the swap copy.
   */
  useHostCopies?(copies: SwapHostCopies): void;
}

/** KV kept in host memory outside the swap space, by content (model, tenant salt, token ids). */
export interface SwapHostCopies {
  /**
   * Pins the longest run of whole chunks at the start of `tokens` that host memory holds in
   * every layer, so nothing evicts them until {@link HeldKv.release}; undefined when it holds
   * none. Called when a sequence is first swapped out.
   */
  hold(model: string, salt: string, tokens: readonly number[]): HeldKv | undefined;
}

/** KV of positions [0, until) kept pinned in host memory for a swapped-out sequence. */
export interface HeldKv {
  /** A whole number of chunks. */
  readonly until: number;
  /**
   * Copies layer `layer` of [0, until) into the engine's KV memory at `target`, each segment's
   * CRC32C checked; rejects with DataLoss on a mismatch (the sequence then recomputes).
   */
  loadInto(layer: number, target: KvRestoreTarget): Promise<void>;
  /** Lets the pins go; called once. */
  release(): void;
}

/** Purge rank of a staged chunk (kv-core's `StageRank`): advisory priority, due time, when prefetched, chain position. */
export interface StagedChunkRank {
  readonly priority: number;
  readonly dueMs: number;
  readonly stamp: number;
  readonly position: number;
}

/** Per model, since start, and the chunks staged now. */
export interface StagingStats {
  readonly staged: number;
  readonly adopted: number;
  readonly purged: number;
  readonly unstaged: number;
  readonly chunks: number;
}

/**
 * Symphony's promotion of prefetched KV to the device: a whole chunk (all layers) placed in free
 * device blocks outside any sequence, ahead of the request an advisory announced. A prefill whose
 * prompt reaches the chunk's key takes it over as a device prefix-cache hit (no restore on its
 * path). Until then it is the first thing the device reclaims when blocks are needed — before
 * cached prefixes, without copy-back (cooperative memory) — and a withdrawn advisory unstages it.
 */
export interface KvStaging {
  /**
   * Places chunk `key` (a chunk key of `model`) on the device from `payload` (the chunk payload
   * layout, every layer, written lower layers first). False, placing nothing, when the device
   * holds the chunk already or has fewer free blocks than a chunk takes: promotion never evicts.
   */
  stage(model: string, key: string, payload: Float32Array, rank: StagedChunkRank): boolean;
  /** Drops a staged chunk no prefill took; false when it is not staged. */
  unstage(model: string, key: string): boolean;
  stats(model: string): StagingStats;
}

/** Per model, since start. */
export interface LayerStreamCounters {
  /** Time compute waited on a layer's KV that was not resident yet (stream stall time). */
  stallSeconds: number;
  sequences: number;
  /** KV bytes moved between the resident planes and the backings. */
  bytes: number;
}

/**
 * SwiftCache's layer stream cache on the serving path: a context longer than a model's device
 * cache keeps only a window of layers resident and streams the rest from backing blocks (the
 * model's own cache, lent units included, then host memory), overlapped with compute. One
 * streamed sequence per model at a time; it is never preempted.
 */
export interface EngineLayerStream {
  /** Longest context (blocks) a streamed sequence of `model` could hold with `deviceBlocks` of its cache. */
  limit(model: string, deviceBlocks: number): number;
  /** Whether a streamed prefill of `contextBlocks` would find its memory now. */
  canStart(model: string, contextBlocks: number): boolean;
  stats(model: string): LayerStreamCounters;
}

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
