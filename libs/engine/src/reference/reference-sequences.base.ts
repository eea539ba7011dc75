import { CHUNK_TOKENS, chunkElems, ErrorCode, MnemoError, padChunkPayload } from '@mnemo/kv-core';
import type { SamplingParams } from '../engine.interface.js';
import { forwardStepShape, type ForwardStep } from './forward.step.js';
import { emptyStats, type EngineStats } from './layer-hooks.js';
import type { ModelRuntime, SeqStepResult, StepItem, StepOptions } from './model.runtime.js';
import type { KvRange } from './paged-kv.cache.js';
import { runPartialPrefill, type PartialPrefillRequest } from './partial-prefill.runner.js';
import { TokenSampler } from './token.sampler.js';

export interface SeqState {
  readonly model: string;
  readonly sampler: TokenSampler;
  /** Prefix-sharing scope; undefined: the sequence neither reuses nor shares KV. */
  readonly salt?: string;
  /** Token ids whose KV the sequence holds (held, while preempted), in order: what resume recomputes. */
  readonly kvTokens: number[];
  /** Last sampled token, not yet in the KV cache: the input of the next decode. */
  pending: number | null;
  /** Its device KV was dropped by preempt; resume rebuilds it. */
  preempted: boolean;
  /** Preempted by a swap-out: its KV is in host memory and swapIn brings it back. */
  swapped: boolean;
  /** Its KV lives in the layer stream cache, not the paged cache. */
  streamed?: boolean;
}

/**
 * The reference engine's sequences on its model runtimes, and the lower-level surface the
 * node-manager's KV store, the profiler and tests drive on them: per-step hooks for layer-wise
 * loads, KV import/export in the chunk payload layout, DroidSpeak partial prefill. A base class
 * rather than a member so that this surface stays ReferenceEngine's own methods for its callers;
 * ReferenceEngine builds the runtimes and adds the Engine contract on top.
 */
export abstract class ReferenceSequences {
  protected readonly runtimes = new Map<string, ModelRuntime<unknown>>();
  protected readonly seqs = new Map<string, SeqState>();
  protected readonly counters: EngineStats = emptyStats();
  protected closed = false;
  /** Told each forward step's shape and compute time (ReferenceEngineOptions.onStep). */
  protected stepListener?: (step: ForwardStep) => void;

  /** Ends a sequence wherever its KV lives (paged, swapped or streamed); the engine owns those places. */
  abstract release(seqId: string): void;

  kvLayout(model: string): { layers: number; rowElems: number } {
    const c = this.runtime(model).config;
    return { layers: c.layers, rowElems: c.kvHeads * c.headDim };
  }

  hiddenSize(model: string): number {
    return this.runtime(model).config.dModel;
  }

  exportChunk(seqId: string, chunk: number, tokens = CHUNK_TOKENS, into?: Float32Array): Float32Array {
    // A release deferred past a pass reports its partial chunk after the sequence left `seqs`.
    const rt = this.seqs.has(seqId)
      ? this.runtime(this.seq(seqId).model)
      : [...this.runtimes.values()].find((r) => r.cache.ledger.has(seqId));
    if (!rt) throw new MnemoError(ErrorCode.NotFound, `unknown sequence ${seqId}`);
    const { layers, kvHeads, headDim } = rt.config;
    const g = { layers, rowElems: kvHeads * headDim };
    if (into && into.length !== chunkElems(g))
      throw new MnemoError(ErrorCode.InvalidRequest, `chunk payload target has ${into.length} floats, a chunk needs ${chunkElems(g)}`);
    const range = { layerStart: 0, layerEnd: layers, tokenStart: chunk * CHUNK_TOKENS, tokenEnd: chunk * CHUNK_TOKENS + tokens };
    // A whole chunk's rows are the payload's layout already: gathered straight into `into`.
    if (tokens === CHUNK_TOKENS) return rt.cache.export(seqId, range, into);
    return padChunkPayload(g, rt.cache.export(seqId, range), tokens, into);
  }

  // ---- lower-level surface (node-manager, profiler, tests) ----

  /**
   * Registers an empty sequence; its KV then grows through step / reserveTokens. With a
   * `cacheSalt` it takes part in prefix sharing under that salt (see {@link PrefillInput}).
   */
  openSequence(seqId: string, model: string, sampling: SamplingParams, cacheSalt?: string): void {
    if (this.seqs.has(seqId)) throw new MnemoError(ErrorCode.Conflict, `sequence ${seqId} already exists`);
    const rt = this.runtime(model);
    const sampler = new TokenSampler(sampling);
    rt.cache.open(seqId, cacheSalt);
    this.seqs.set(seqId, { model, sampler, salt: cacheSalt, kvTokens: [], pending: null, preempted: false, swapped: false });
  }

  /**
   * Starts an empty sharing sequence from the longest prefix of `tokens` the device caches
   * (whole blocks, at least one token left to compute); returns the tokens covered.
   */
  attachCachedPrefix(seqId: string, tokens: readonly number[]): number {
    const s = this.seq(seqId);
    if (s.salt === undefined) return 0;
    const hit = this.runtime(s.model).cache.attachPrefix(seqId, tokens);
    for (let i = 0; i < hit; i++) s.kvTokens.push(tokens[i]!);
    this.counters.cachedTokens += hit;
    return hit;
  }

  /**
   * One batched forward step over sequences of one model: each item's tokens are
   * appended (prefill rows and decode rows may be mixed). Hooks run per layer.
   */
  async step(items: readonly StepItem[], opts: StepOptions = {}): Promise<SeqStepResult[]> {
    if (items.length === 0) return [];
    const groups = this.groupByModel(items.map((i) => i.seqId));
    if (groups.size > 1)
      throw new MnemoError(ErrorCode.InvalidRequest, `one step must hold one model, got ${[...groups.keys()].join(', ')}`);
    const [model] = groups.keys();
    for (const it of items)
      if (this.seq(it.seqId).preempted) throw new MnemoError(ErrorCode.InvalidRequest, `sequence ${it.seqId} is preempted`);
    const listen = this.stepListener;
    const before = listen ? items.map((it) => this.seq(it.seqId).kvTokens.length) : [];
    const waited = () => this.counters.blockedIoMs + this.counters.storeWaitMs;
    const [t0, waitedBefore] = [performance.now(), waited()];
    const results = await this.runtime(model).step(items, opts);
    for (const it of items) this.seqs.get(it.seqId)?.kvTokens.push(...it.tokens);
    if (listen) {
      const ms = performance.now() - t0 - (waited() - waitedBefore);
      listen(
        forwardStepShape(
          items.map((it) => it.tokens.length),
          before,
          Math.max(0, ms),
        ),
      );
    }
    return results;
  }

  /** Samples from logits with the sequence's sampler and remembers the token as the next decode input. */
  sample(seqId: string, logits: Float32Array): number {
    const s = this.seq(seqId);
    const token = s.sampler.sample(logits.subarray(logits.length - this.runtime(s.model).config.vocab));
    s.pending = token;
    return token;
  }

  /** Sets the next decode input explicitly (a sequence restored from a cache tier). */
  setPendingToken(seqId: string, token: number): void {
    const s = this.seq(seqId);
    this.runtime(s.model).checkTokens([token]);
    s.pending = token;
  }

  /**
   * Extends the sequence by positions whose KV will arrive by importKv (a prefix restored from
   * another tier): their token ids, or — for a sequence that does not share — just how many.
   */
  reserveTokens(seqId: string, tokens: number | readonly number[]): void {
    const s = this.seq(seqId);
    const ids = typeof tokens === 'number' ? undefined : tokens;
    const n = typeof tokens === 'number' ? tokens : tokens.length;
    if (s.salt !== undefined && ids === undefined)
      throw new MnemoError(ErrorCode.InvalidRequest, `sequence ${seqId} shares its prefix: reserve needs token ids`);
    if (ids) this.runtime(s.model).checkTokens(ids);
    this.runtime(s.model).cache.appendAll([{ seqId, tokens: n, ids }]);
    if (ids) s.kvTokens.push(...ids);
  }

  /** KV of a layer/token range on the host, chunk payload layout `[layer][K|V][token][kv_head][head_dim]`. */
  exportKv(seqId: string, range: KvRange): Float32Array {
    return this.runtime(this.seq(seqId).model).cache.export(seqId, range);
  }

  /** Writes host KV (layout as exportKv) into already-reserved positions of the sequence. */
  importKv(seqId: string, range: KvRange, data: Float32Array): void {
    this.runtime(this.seq(seqId).model).cache.import(seqId, range, data);
  }

  /** DroidSpeak partial prefill into a new sequence; samples its first token. */
  async partialPrefill(model: string, sampling: SamplingParams, req: PartialPrefillRequest): Promise<SeqStepResult & { token: number }> {
    this.openSequence(req.seqId, model, sampling);
    try {
      const r = await runPartialPrefill(this.runtime(model), req);
      return { ...r, token: this.sample(req.seqId, r.logits) };
    } catch (e) {
      this.release(req.seqId);
      throw e;
    }
  }

  sequenceLength(seqId: string): number {
    return this.runtime(this.seq(seqId).model).cache.length(seqId);
  }

  hasSequence(seqId: string): boolean {
    return this.seqs.has(seqId);
  }

  /** Device KV blocks of a model an allocation can take now (free and reclaimable cached ones). */
  freeBlocks(model: string): number {
    return this.runtime(model).cache.ledger.blocks.numAvailable;
  }

  /** Blocks a step appending these token counts would allocate (admission checks). */
  blocksNeeded(items: ReadonlyArray<{ seqId: string; tokens: number }>): number {
    return items.reduce((n, it) => n + this.runtime(this.seq(it.seqId).model).cache.blocksNeeded([it]), 0);
  }

  modelConfig(model: string) {
    return this.runtime(model).config;
  }

  stats(): Readonly<EngineStats> {
    return { ...this.counters };
  }

  protected runtime(model: string): ModelRuntime<unknown> {
    if (this.closed) throw new MnemoError(ErrorCode.Internal, 'engine is closed');
    const rt = this.runtimes.get(model);
    if (!rt) throw new MnemoError(ErrorCode.ModelNotFound, `model ${model} is not loaded`);
    return rt;
  }

  protected seq(seqId: string): SeqState {
    const s = this.seqs.get(seqId);
    if (!s) throw new MnemoError(ErrorCode.NotFound, `unknown sequence ${seqId}`);
    return s;
  }

  protected groupByModel(seqIds: readonly string[]): Map<string, string[]> {
    const groups = new Map<string, string[]>();
    for (const id of seqIds) {
      const m = this.seq(id).model;
      groups.set(m, [...(groups.get(m) ?? []), id]);
    }
    return groups;
  }
}
