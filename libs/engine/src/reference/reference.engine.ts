import { ErrorCode, MnemoError } from '@mnemo/kv-core';
import { createKernelBackend, type KernelBackend } from '@mnemo/native-cuda';
import type { Engine, ServedModel, PrefillInput, SamplingParams, TokenOutput } from '../engine.interface.js';
import type { ModelWeights } from '../weights/model-weights.js';
import { emptyStats, type EngineStats } from './layer-hooks.js';
import { DEFAULT_YIELD_EVERY_MS } from './loop.yielder.js';
import { ModelRuntime, type SeqStepResult, type StepItem, type StepOptions } from './model.runtime.js';
import type { KvRange } from './paged-kv.cache.js';
import { runPartialPrefill, type PartialPrefillRequest } from './partial-prefill.runner.js';
import { TokenSampler } from './token.sampler.js';
import { resolveWeights } from './weights.resolver.js';

export interface ReferenceEngineOptions {
  /** Catalog ids (`mnemo-tiny`, …), Hugging Face model directories, or weights already in memory. */
  readonly models: ReadonlyArray<string | ModelWeights>;
  /** 'cpu' | 'cuda' via `createKernelBackend`, or a backend instance. */
  readonly backend: 'cpu' | 'cuda' | KernelBackend<unknown>;
  /** Device KV blocks (16 tokens each) per model: one number for all, or per model id. */
  readonly kvBlocks: number | Readonly<Record<string, number>>;
  /** Compute between event-loop turns inside a pass (default 20 ms; Infinity: never yield). */
  readonly yieldEveryMs?: number;
}

interface SeqState {
  readonly model: string;
  readonly sampler: TokenSampler;
  /** Last sampled token, not yet in the KV cache: the input of the next decode. */
  pending: number | null;
}

/**
 * The reference engine: real Llama-family transformers on a KernelBackend, with a
 * paged block-major KV cache per model. Besides the Engine contract it exposes the
 * lower-level surface the node-manager's KV store drives: per-step hooks for
 * layer-wise loads, KV import/export in the chunk payload layout, E-cache capture
 * and DroidSpeak partial prefill.
 */
export class ReferenceEngine implements Engine {
  readonly kind = 'reference' as const;
  private readonly runtimes = new Map<string, ModelRuntime<unknown>>();
  private readonly seqs = new Map<string, SeqState>();
  private readonly counters: EngineStats = emptyStats();
  private closed = false;

  constructor(
    readonly backend: KernelBackend<unknown>,
    weights: readonly ModelWeights[],
    kvBlocks: ReferenceEngineOptions['kvBlocks'],
    yieldEveryMs: number = DEFAULT_YIELD_EVERY_MS,
  ) {
    if (!(yieldEveryMs >= 0)) throw new RangeError(`yieldEveryMs must be ≥ 0, got ${yieldEveryMs}`);
    for (const w of weights) {
      const id = w.config.id;
      if (this.runtimes.has(id)) throw new MnemoError(ErrorCode.Conflict, `model ${id} listed twice`);
      const blocks = typeof kvBlocks === 'number' ? kvBlocks : kvBlocks[id];
      if (!Number.isInteger(blocks) || blocks <= 0) throw new RangeError(`kvBlocks for ${id} must be a positive integer, got ${blocks}`);
      this.runtimes.set(id, new ModelRuntime(backend, w, blocks, this.counters, yieldEveryMs));
    }
  }

  static async create(opts: ReferenceEngineOptions): Promise<ReferenceEngine> {
    const backend = typeof opts.backend === 'string' ? (createKernelBackend(opts.backend) as KernelBackend<unknown>) : opts.backend;
    return new ReferenceEngine(backend, opts.models.map(resolveWeights), opts.kvBlocks, opts.yieldEveryMs);
  }

  models(): readonly ServedModel[] {
    return [...this.runtimes.values()].map(({ config: c }) => ({ id: c.id, engine: 'reference', vocabSize: c.vocab, maxContext: c.maxContext, eosTokenId: c.eosTokenId }));
  }

  /** Sequences released while their step runs (a cancelled request) are left out of the outputs. */
  async prefill(batch: readonly PrefillInput[]): Promise<TokenOutput[]> {
    const opened: string[] = [];
    try {
      for (const input of batch) {
        this.openSequence(input.seqId, input.model, input.sampling);
        opened.push(input.seqId);
      }
      const outputs = new Map<string, number>();
      for (const [, group] of this.groupByModel(batch.map((b) => b.seqId))) {
        const byId = new Map(batch.map((b) => [b.seqId, b.tokens]));
        const results = await this.step(group.map((seqId) => ({ seqId, tokens: byId.get(seqId)! })));
        for (const r of results) if (this.seqs.has(r.seqId)) outputs.set(r.seqId, this.sample(r.seqId, r.logits));
      }
      return batch.filter((b) => outputs.has(b.seqId)).map((b) => ({ seqId: b.seqId, token: outputs.get(b.seqId)! }));
    } catch (e) {
      for (const id of opened) this.release(id);
      throw e;
    }
  }

  /** As {@link prefill}: a sequence released mid-step gets no output. */
  async decode(seqIds: readonly string[]): Promise<TokenOutput[]> {
    const outputs = new Map<string, number>();
    for (const [, group] of this.groupByModel(seqIds)) {
      const items = group.map((seqId) => {
        const pending = this.seq(seqId).pending;
        if (pending === null) throw new MnemoError(ErrorCode.InvalidRequest, `sequence ${seqId} has no sampled token to decode from`);
        return { seqId, tokens: [pending] };
      });
      for (const r of await this.step(items)) if (this.seqs.has(r.seqId)) outputs.set(r.seqId, this.sample(r.seqId, r.logits));
    }
    return seqIds.filter((id) => outputs.has(id)).map((seqId) => ({ seqId, token: outputs.get(seqId)! }));
  }

  kvUsage(): number {
    let used = 0;
    let capacity = 0;
    for (const rt of this.runtimes.values()) {
      used += rt.cache.allocator.numUsed;
      capacity += rt.cache.allocator.capacity;
    }
    return capacity === 0 ? 0 : used / capacity;
  }

  release(seqId: string): void {
    const s = this.seqs.get(seqId);
    if (!s) return;
    this.runtimes.get(s.model)?.release(seqId);
    this.seqs.delete(seqId);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const id of [...this.seqs.keys()]) this.release(id);
    for (const rt of this.runtimes.values()) rt.free();
    this.runtimes.clear();
  }

  // ---- lower-level surface (node-manager, profiler, tests) ----

  /** Registers an empty sequence; its KV then grows through step / reserveTokens. */
  openSequence(seqId: string, model: string, sampling: SamplingParams): void {
    if (this.seqs.has(seqId)) throw new MnemoError(ErrorCode.Conflict, `sequence ${seqId} already exists`);
    const rt = this.runtime(model);
    const sampler = new TokenSampler(sampling);
    rt.cache.open(seqId);
    this.seqs.set(seqId, { model, sampler, pending: null });
  }

  /**
   * One batched forward step over sequences of one model: each item's tokens are
   * appended (prefill rows and decode rows may be mixed). Hooks run per layer.
   */
  async step(items: readonly StepItem[], opts: StepOptions = {}): Promise<SeqStepResult[]> {
    if (items.length === 0) return [];
    const groups = this.groupByModel(items.map((i) => i.seqId));
    if (groups.size > 1) throw new MnemoError(ErrorCode.InvalidRequest, `one step must hold one model, got ${[...groups.keys()].join(', ')}`);
    const [model] = groups.keys();
    return this.runtime(model).step(items, opts);
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

  /** Extends the sequence by `tokens` positions whose KV will arrive by importKv (a cached prefix). */
  reserveTokens(seqId: string, tokens: number): void {
    this.runtime(this.seq(seqId).model).cache.appendAll([{ seqId, tokens }]);
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

  /** Free device KV blocks of a model. */
  freeBlocks(model: string): number {
    return this.runtime(model).cache.allocator.numFree;
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

  private runtime(model: string): ModelRuntime<unknown> {
    if (this.closed) throw new MnemoError(ErrorCode.Internal, 'engine is closed');
    const rt = this.runtimes.get(model);
    if (!rt) throw new MnemoError(ErrorCode.ModelNotFound, `model ${model} is not loaded`);
    return rt;
  }

  private seq(seqId: string): SeqState {
    const s = this.seqs.get(seqId);
    if (!s) throw new MnemoError(ErrorCode.NotFound, `unknown sequence ${seqId}`);
    return s;
  }

  private groupByModel(seqIds: readonly string[]): Map<string, string[]> {
    const groups = new Map<string, string[]>();
    for (const id of seqIds) {
      const m = this.seq(id).model;
      groups.set(m, [...(groups.get(m) ?? []), id]);
    }
    return groups;
  }
}
