import { CHUNK_TOKENS, chunkElems, ErrorCode, isMnemoError, MnemoError, padChunkPayload, planReuse, type DeviceChunkEvent, type ElasticMember } from '@mnemo/kv-core';
import { createKernelBackend, type KernelBackend } from '@mnemo/native-cuda';
import type { CrossModelPlan, Engine, EngineLayerStream, EngineChunkEvent, KvBudget, KvStaging, KvRestorePlan, ServedModel, PrefillInput, SamplingParams, TokenOutput } from '../engine.interface.js';
import { checkDrawOffset } from '../engine.interface.js';
import { budgetReserve, elasticSpec, isDeviceKvBudget, splitDeviceBudget, type DeviceKvBudget } from '../model/device-budget.js';
import { KvSwapper, type SwapOptions } from './kv.swapper.js';
import type { ModelWeights } from '../weights/model-weights.js';
import { emptyStats, type EngineStats } from './layer-hooks.js';
import { ModelRuntime, type SeqStepResult, type StepItem, type StepOptions } from './model.runtime.js';
import type { KvRange } from './paged-kv.cache.js';
import { runPartialPrefill, type PartialPrefillRequest } from './partial-prefill.runner.js';
import { TokenSampler } from './token.sampler.js';
import { StreamedSequences, type LayerStreamSettings } from './layer-stream/streamed-sequences.js';
import { resolveWeights } from './weights.resolver.js';
import { chunkStaging } from '../staging/chunk.staging.js';

export interface ReferenceEngineOptions {
  /** Catalog ids (`mnemo-tiny`, …), Hugging Face model directories, or weights already in memory. */
  readonly models: ReadonlyArray<string | ModelWeights>;
  /** 'cpu' | 'cuda' via `createKernelBackend`, or a backend instance. */
  readonly backend: 'cpu' | 'cuda' | KernelBackend<unknown>;
  /** Device KV blocks (16 tokens each) per model: one number for all, per model id, or split from one device budget. */
  readonly kvBlocks: number | Readonly<Record<string, number>> | DeviceKvBudget;
  /** Block group size (FastSwitch §3.1) of every model's device cache; 0 or absent: no groups. */
  readonly blockGroups?: number;
  /** Swap preemption; only on a backend whose KV lives in host memory (CPU), ignored otherwise. */
  readonly swap?: SwapOptions;
  /** Most cached (reusable, unreferenced) blocks each model's device cache keeps; default unbounded. */
  readonly prefixCacheBlocks?: number;
  /** Serve contexts longer than a model's device cache through the layer stream cache; absent: refused. */
  readonly layerStream?: LayerStreamSettings;
}

interface SeqState {
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
  private readonly chunkListeners = new Set<(e: EngineChunkEvent) => void>();
  private closed = false;
  readonly swap?: KvSwapper;
  readonly layerStream?: EngineLayerStream;
  readonly staging: KvStaging = chunkStaging({
    ledger: (model) => this.runtime(model).cache.ledger,
    payloadElems: (model) => chunkElems(this.kvLayout(model)),
    write: (model, ids, payload) => this.runtime(model).cache.writeBlocks(ids, payload),
  });
  private readonly streams?: StreamedSequences;

  constructor(
    readonly backend: KernelBackend<unknown>,
    weights: readonly ModelWeights[],
    kvBlocks: number | Readonly<Record<string, number>>,
    extra: Pick<ReferenceEngineOptions, 'blockGroups' | 'swap' | 'prefixCacheBlocks' | 'layerStream'> = {},
    /** Per model, blocks its tensor reserves beyond its start (an elastic cache on a node budget). */
    private readonly reserve?: Readonly<Record<string, number>>,
  ) {
    for (const w of weights) {
      const id = w.config.id;
      if (this.runtimes.has(id)) throw new MnemoError(ErrorCode.Conflict, `model ${id} listed twice`);
      const blocks = typeof kvBlocks === 'number' ? kvBlocks : kvBlocks[id];
      if (!Number.isInteger(blocks) || blocks <= 0) throw new RangeError(`kvBlocks for ${id} must be a positive integer, got ${blocks}`);
      const onChunk = (e: DeviceChunkEvent) => {
        for (const l of this.chunkListeners) l({ ...e, model: id });
      };
      this.runtimes.set(id, new ModelRuntime(backend, w, blocks, this.counters, onChunk, Math.max(blocks, reserve?.[id] ?? blocks), extra.blockGroups ? { groupBlocks: extra.blockGroups } : undefined));
      if (extra.prefixCacheBlocks !== undefined) this.runtimes.get(id)!.cache.ledger.blocks.setMaxCached(extra.prefixCacheBlocks);
    }
    if (extra.swap && hostMemoryBackend(backend)) {
      this.swap = new KvSwapper(extra.swap, (m) => this.runtime(m) as ModelRuntime<Float32Array>, (id) => this.seqs.get(id));
    }
    if (extra.layerStream) {
      const streams = (this.streams = new StreamedSequences(backend, extra.layerStream, backend.name === 'cuda' ? 2 : 4));
      for (const rt of this.runtimes.values()) streams.check(rt);
      this.layerStream = {
        limit: (model, deviceBlocks) => streams.limit(this.runtime(model), deviceBlocks),
        canStart: (model, contextBlocks) => streams.canStart(this.runtime(model), contextBlocks),
        stats: (model) => streams.stats(model),
      };
    }
  }

  static async create(opts: ReferenceEngineOptions): Promise<ReferenceEngine> {
    const backend = typeof opts.backend === 'string' ? (createKernelBackend(opts.backend) as KernelBackend<unknown>) : opts.backend;
    const weights = opts.models.map(resolveWeights);
    // The CPU backend stores KV as fp32; CUDA as fp16/bf16.
    const bytesPerElement = backend.name === 'cuda' ? 2 : 4;
    if (!isDeviceKvBudget(opts.kvBlocks)) return new ReferenceEngine(backend, weights, opts.kvBlocks, opts);
    const configs = weights.map((w) => w.config);
    const regions = splitDeviceBudget(configs, opts.kvBlocks, bytesPerElement);
    // NOTE: a CUDA tensor is committed memory: reserving the whole budget per model would take
    // models × budget of the GPU. Without VMM page remapping (not built) a CUDA cache keeps its
    // region: it can lend units but not grow, so the coordinator never moves any.
    const reserve = backend.name === 'cuda' ? regions : budgetReserve(configs, opts.kvBlocks, bytesPerElement);
    return new ReferenceEngine(backend, weights, regions, opts, reserve);
  }

  /**
   * The models' caches as elastic members (their block managers resize in place), when the
   * engine was built on one device budget; empty otherwise.
   */
  elasticMembers(): ElasticMember[] {
    if (!this.reserve) return [];
    return [...this.runtimes.values()].map((rt) => ({ ...elasticSpec(rt.config), blocks: rt.cache.ledger.blocks, maxBlocks: rt.cache.reserveBlocks }));
  }

  models(): readonly ServedModel[] {
    return [...this.runtimes.values()].map(({ config: c }) => ({ id: c.id, engine: 'reference', vocabSize: c.vocab, maxContext: c.maxContext, eosTokenId: c.eosTokenId }));
  }

  /**
   * Each input starts from the longest prefix the device cache holds under its salt, restores
   * what its restore plan offers after that (layer by layer, overlapped with compute) and
   * computes the rest. Sequences released while their step runs (a cancelled request) are left
   * out of the outputs.
   */
  async prefill(batch: readonly PrefillInput[]): Promise<TokenOutput[]> {
    for (const input of batch) checkDrawOffset(input);
    const streamed = batch.find((b) => b.layerStream);
    if (streamed) {
      if (batch.length > 1) throw new MnemoError(ErrorCode.InvalidRequest, `streamed sequence ${streamed.seqId} must be prefilled alone`);
      return this.prefillStreamed(streamed);
    }
    const opened: string[] = [];
    const plans = new Map<string, { plan: KvRestorePlan; from: number }>();
    const crosses = new Map<string, CrossModelPlan>();
    const failed = new Set<string>();
    let ok = false;
    const blockedBefore = this.counters.blockedIoMs;
    try {
      const rest = new Map<string, readonly number[]>();
      const cached = new Map<string, number>();
      for (const input of batch) {
        const cross = this.crossModelPlan(input);
        // Approximate KV must never be served as this model's own: such a sequence does not share.
        this.openSequence(input.seqId, input.model, input.sampling, cross ? undefined : input.cacheSalt);
        opened.push(input.seqId);
        if (cross) {
          crosses.set(input.seqId, cross);
          await this.prefillCrossPrefix(input, cross);
          cached.set(input.seqId, 0);
          rest.set(input.seqId, input.tokens.slice(cross.until));
          continue;
        }
        const hit = this.attachCachedPrefix(input.seqId, input.tokens);
        const plan = input.restore?.(hit);
        let from = hit;
        if (plan) {
          plans.set(input.seqId, { plan, from: hit });
          if (!Number.isInteger(plan.until) || plan.until <= hit || plan.until >= input.tokens.length) {
            throw new MnemoError(ErrorCode.InvalidRequest, `restore of ${input.seqId} must end in (${hit}, ${input.tokens.length}), got ${plan.until}`);
          }
          this.reserveTokens(input.seqId, input.tokens.slice(hit, plan.until));
          from = plan.until;
        }
        cached.set(input.seqId, from);
        rest.set(input.seqId, input.tokens.slice(from));
      }
      const outputs = new Map<string, number>();
      const eCaches = new Map<string, Map<number, Float32Array>>();
      const inputs = new Map(batch.map((b) => [b.seqId, b]));
      // E caches only of prompts computed from position 0 (a cached prefix has no hidden state here).
      const wantsE = (id: string) => (inputs.get(id)!.captureE?.length ?? 0) > 0 && cached.get(id) === 0 && !crosses.has(id);
      for (const [model, group] of this.groupByModel(batch.map((b) => b.seqId))) {
        const restoring = group.filter((id) => plans.has(id));
        const slots = new Map<string, Int32Array>();
        const hooks = restoring.length === 0 ? {} : { beforeLayer: (l: number) => this.restoreLayer(restoring, plans, slots, l, failed) };
        const L = this.runtime(model).config.layers;
        const capture = [...new Set(group.filter(wantsE).flatMap((id) => inputs.get(id)!.captureE!))].filter((l) => Number.isInteger(l) && l > 0 && l < L);
        const results = await this.step(group.map((seqId) => ({ seqId, tokens: rest.get(seqId)! })), { ...hooks, ...(capture.length > 0 ? { captureLayers: capture } : {}) });
        for (const r of results) {
          if (!this.seqs.has(r.seqId)) continue;
          outputs.set(r.seqId, this.sample(r.seqId, r.logits));
          if (wantsE(r.seqId) && r.eCache.size > 0) eCaches.set(r.seqId, new Map([...r.eCache].filter(([l]) => inputs.get(r.seqId)!.captureE!.includes(l))));
        }
      }
      ok = true;
      return batch
        .filter((b) => outputs.has(b.seqId))
        .map((b) => {
          const restored = plans.has(b.seqId) ? plans.get(b.seqId)!.plan.until - plans.get(b.seqId)!.from : 0;
          const cross = crosses.get(b.seqId);
          const crossModel = cross ? { crossModel: { baseModel: cross.baseModel, pattern: { ...cross.pattern }, reusedTokens: cross.until } } : {};
          const e = eCaches.get(b.seqId);
          return { seqId: b.seqId, token: outputs.get(b.seqId)!, cachedTokens: cached.get(b.seqId)!, restoredTokens: restored, ...crossModel, ...(e ? { eCache: e } : {}) };
        });
    } catch (e) {
      for (const id of opened) this.release(id);
      throw e;
    } finally {
      const blocked = this.counters.blockedIoMs - blockedBefore;
      for (const [id, { plan }] of plans) plan.done?.(ok && !failed.has(id), blocked);
      for (const cross of crosses.values()) cross.done?.(ok);
    }
  }

  /** A context beyond the device cache: its prompt through the layer stream cache (no prefix sharing, no restore). */
  private async prefillStreamed(input: PrefillInput): Promise<TokenOutput[]> {
    if (!this.streams) throw new MnemoError(ErrorCode.InvalidRequest, 'layer streaming is off on this engine');
    const rt = this.runtime(input.model);
    rt.checkTokens(input.tokens);
    const contextBlocks = input.layerStream!.contextBlocks;
    if (contextBlocks * 16 > rt.config.maxContext + 15) throw new MnemoError(ErrorCode.PromptTooLong, `${contextBlocks} blocks exceed ${rt.config.id}'s context of ${rt.config.maxContext}`);
    if (this.seqs.has(input.seqId)) throw new MnemoError(ErrorCode.Conflict, `sequence ${input.seqId} already exists`);
    this.seqs.set(input.seqId, { model: input.model, sampler: new TokenSampler(input.sampling), kvTokens: [], pending: null, preempted: false, swapped: false, streamed: true });
    try {
      const logits = await this.streams.start(rt, input.seqId, input.tokens, contextBlocks);
      if (!this.seqs.has(input.seqId)) return [];
      this.seq(input.seqId).kvTokens.push(...input.tokens);
      return [{ seqId: input.seqId, token: this.sample(input.seqId, logits), cachedTokens: 0 }];
    } catch (e) {
      this.release(input.seqId);
      throw e;
    }
  }

  /**
   * The input's cross-model plan when it is one this engine can run: a served base with the
   * same KV geometry, a valid pattern, a prefix short of the prompt, an E cache when the
   * pattern restarts at a transition layer. Anything else is declined (ordinary prefill).
   */
  private crossModelPlan(input: PrefillInput): CrossModelPlan | undefined {
    if (!input.crossModel) return undefined;
    const plan = input.crossModel(this.cachedTokens(input));
    if (!plan) return undefined;
    const own = this.runtime(input.model).config;
    const base = this.runtimes.get(plan.baseModel)?.config;
    let fits = base !== undefined && base.layers === own.layers && base.kvHeads === own.kvHeads && base.headDim === own.headDim && base.dModel === own.dModel;
    fits &&= Number.isInteger(plan.until) && plan.until > 0 && plan.until < input.tokens.length;
    try {
      fits &&= planReuse(plan.pattern, own.layers).eLayer === null || plan.loadE !== undefined;
    } catch {
      fits = false;
    }
    if (!fits) plan.done?.(false);
    return fits ? plan : undefined;
  }

  /** Partial prefill of the prompt's first `until` positions over the base's KV (DroidSpeak §4.5). */
  private async prefillCrossPrefix(input: PrefillInput, plan: CrossModelPlan): Promise<void> {
    const prefix = input.tokens.slice(0, plan.until);
    const loadE = plan.loadE?.bind(plan);
    await runPartialPrefill(this.runtime(input.model), {
      seqId: input.seqId,
      tokens: prefix,
      pattern: plan.pattern,
      fetchKv: (l) => plan.load(l),
      ...(loadE ? { fetchE: (l: number) => loadE(l) } : {}),
    });
    this.seq(input.seqId).kvTokens.push(...prefix);
  }

  /**
   * One layer of every restoring sequence's planned KV, imported as soon as it arrives. A load
   * that fails with DataLoss drops its sequence only (released, in `failed`): the pass goes on for
   * the others, and the released sequence's rows are never committed (see ModelRuntime.step).
   */
  private async restoreLayer(seqIds: readonly string[], plans: ReadonlyMap<string, { plan: KvRestorePlan; from: number }>, slots: Map<string, Int32Array>, layer: number, failed: Set<string>): Promise<void> {
    const one = async (seqId: string): Promise<void> => {
      try {
        await this.restoreOne(seqId, plans, slots, layer);
      } catch (e) {
        if (!isMnemoError(e) || e.code !== ErrorCode.DataLoss) throw e;
        failed.add(seqId);
        this.release(seqId);
      }
    };
    await Promise.all(seqIds.map(one));
  }

  private async restoreOne(seqId: string, plans: ReadonlyMap<string, { plan: KvRestorePlan; from: number }>, slots: Map<string, Int32Array>, layer: number): Promise<void> {
    const { plan, from } = plans.get(seqId)!;
    // Released meanwhile: its blocks go back once the pass ends; nothing to write.
    if (!this.seqs.has(seqId)) return;
    const cache = this.runtime(this.seq(seqId).model).cache;
    // Looked up once per pass, not once per layer: the pass holds the sequence's blocks (a
    // sequence cancelled meanwhile keeps them until the pass ends, so writing them is harmless).
    let at = slots.get(seqId);
    if (!at) slots.set(seqId, (at = cache.slots(seqId, from, plan.until)));
    // Host-resident cache (CPU): the plan copies the layer's rows into their slots itself,
    // on its copy threads — no payload, and no second pass over the bytes on this thread.
    const target = plan.loadInto ? cache.hostTarget(at, layer) : undefined;
    if (target) return plan.loadInto!(layer, target);
    const data = await plan.load(layer);
    // Cancelled meanwhile: its blocks go back once the pass ends; nothing to write.
    if (!this.seqs.has(seqId)) return;
    cache.import(seqId, { layerStart: layer, layerEnd: layer + 1, tokenStart: from, tokenEnd: plan.until }, data, at);
  }

  /** As {@link prefill}: a sequence released mid-step gets no output. */
  async decode(seqIds: readonly string[]): Promise<TokenOutput[]> {
    const outputs = new Map<string, number>();
    const streamed = seqIds.filter((id) => this.seq(id).streamed);
    const paged = seqIds.filter((id) => !this.seq(id).streamed);
    for (const seqId of streamed) {
      const s = this.seq(seqId);
      if (s.pending === null) throw new MnemoError(ErrorCode.InvalidRequest, `sequence ${seqId} has no sampled token to decode from`);
      const logits = await this.streams!.step(seqId, [s.pending]);
      if (!this.seqs.has(seqId)) continue;
      s.kvTokens.push(s.pending);
      outputs.set(seqId, this.sample(seqId, logits));
    }
    for (const [, group] of this.groupByModel(paged)) {
      const items = group.map((seqId) => {
        const s = this.seq(seqId);
        if (s.preempted) throw new MnemoError(ErrorCode.InvalidRequest, `sequence ${seqId} is preempted: resume it first`);
        if (s.pending === null) throw new MnemoError(ErrorCode.InvalidRequest, `sequence ${seqId} has no sampled token to decode from`);
        return { seqId, tokens: [s.pending] };
      });
      for (const r of await this.step(items)) if (this.seqs.has(r.seqId)) outputs.set(r.seqId, this.sample(r.seqId, r.logits));
    }
    return seqIds.filter((id) => outputs.has(id)).map((seqId) => ({ seqId, token: outputs.get(seqId)! }));
  }

  /** Blocks held by sequences over all models' capacity; cached blocks nobody holds count as free. */
  kvUsage(): number {
    let used = 0;
    let capacity = 0;
    for (const rt of this.runtimes.values()) {
      used += rt.cache.ledger.blocks.numActive;
      capacity += rt.cache.ledger.blocks.capacity;
    }
    return capacity === 0 ? 0 : used / capacity;
  }

  kvBudget(model: string): KvBudget {
    const b = this.runtime(model).cache.ledger.blocks;
    return { capacity: b.capacity, available: b.numAvailable };
  }

  cachedTokens(input: PrefillInput): number {
    if (input.cacheSalt === undefined) return 0;
    return this.runtime(input.model).cache.ledger.cachedPrefix(input.cacheSalt, input.tokens);
  }

  prefillBlocks(input: PrefillInput): number {
    return this.runtime(input.model).cache.ledger.prefixCost(input.cacheSalt, input.tokens).blocks;
  }

  decodeBlocks(seqIds: readonly string[]): number {
    return seqIds.reduce((n, seqId) => n + this.runtime(this.seq(seqId).model).cache.blocksNeeded([{ seqId, tokens: 1 }]), 0);
  }

  exclusiveBlocks(seqId: string): number {
    const { ledger } = this.runtime(this.seq(seqId).model).cache;
    return ledger.blockIds(seqId).filter((id) => ledger.blocks.refCount(id) === 1).length;
  }

  preempt(seqId: string): void {
    const s = this.seq(seqId);
    if (s.preempted) return;
    if (s.streamed) throw new MnemoError(ErrorCode.Conflict, `streamed sequence ${seqId} is not preemptible`);
    const rt = this.runtime(s.model);
    if (rt.isBusy(seqId)) throw new MnemoError(ErrorCode.Conflict, `sequence ${seqId} is inside a forward pass`);
    rt.release(seqId);
    rt.cache.open(seqId, s.salt);
    s.preempted = true;
    this.counters.preemptions++;
  }

  resumeBlocks(seqId: string): number {
    const s = this.seq(seqId);
    if (!s.preempted) return 0;
    return this.runtime(s.model).cache.ledger.prefixCost(s.salt, s.kvTokens).blocks;
  }

  /** Recomputes preempted sequences' KV (no logits, no sampling: their next decode input is kept). */
  async resume(seqIds: readonly string[]): Promise<void> {
    for (const [model, group] of this.groupByModel(seqIds.filter((id) => this.seq(id).preempted))) {
      // A request cancelled while an earlier group ran is gone by now.
      const items = group.filter((seqId) => this.seqs.has(seqId)).map((seqId) => {
        const s = this.seq(seqId);
        const hit = s.salt === undefined ? 0 : this.runtime(model).cache.attachPrefix(seqId, s.kvTokens);
        this.counters.cachedTokens += hit;
        return { seqId, tokens: s.kvTokens.slice(hit), logits: 'none' as const };
      });
      try {
        await this.runtime(model).step(items);
      } catch (e) {
        // The caches are unspecified after a failed pass: back to preempted, empty.
        for (const { seqId } of items) if (this.seqs.has(seqId)) this.dropKv(seqId);
        throw e;
      }
      for (const { seqId } of items) {
        const s = this.seqs.get(seqId);
        if (s) s.preempted = s.swapped = false;
      }
    }
  }

  release(seqId: string): void {
    const s = this.seqs.get(seqId);
    if (!s) return;
    if (s.streamed) this.streams!.release(seqId);
    else this.runtimes.get(s.model)?.release(seqId);
    this.swap?.drop(seqId, s.model);
    this.seqs.delete(seqId);
  }

  /** Empties a sequence's KV after a failed pass, leaving it preempted so resume recomputes it. */
  private dropKv(seqId: string): void {
    const s = this.seq(seqId);
    const rt = this.runtime(s.model);
    rt.release(seqId);
    if (!rt.isBusy(seqId)) rt.cache.open(seqId, s.salt);
    s.preempted = true;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const id of [...this.seqs.keys()]) this.release(id);
    this.streams?.close();
    for (const rt of this.runtimes.values()) rt.free();
    this.runtimes.clear();
  }

  watchChunks(listener: (e: EngineChunkEvent) => void): () => void {
    this.chunkListeners.add(listener);
    return () => this.chunkListeners.delete(listener);
  }

  kvLayout(model: string): { layers: number; rowElems: number } {
    const c = this.runtime(model).config;
    return { layers: c.layers, rowElems: c.kvHeads * c.headDim };
  }

  hiddenSize(model: string): number {
    return this.runtime(model).config.dModel;
  }

  exportChunk(seqId: string, chunk: number, tokens = CHUNK_TOKENS, into?: Float32Array): Float32Array {
    // A release deferred past a pass reports its partial chunk after the sequence left `seqs`.
    const rt = this.seqs.has(seqId) ? this.runtime(this.seq(seqId).model) : [...this.runtimes.values()].find((r) => r.cache.ledger.has(seqId));
    if (!rt) throw new MnemoError(ErrorCode.NotFound, `unknown sequence ${seqId}`);
    const { layers, kvHeads, headDim } = rt.config;
    const g = { layers, rowElems: kvHeads * headDim };
    if (into && into.length !== chunkElems(g)) throw new MnemoError(ErrorCode.InvalidRequest, `chunk payload target has ${into.length} floats, a chunk needs ${chunkElems(g)}`);
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
    if (groups.size > 1) throw new MnemoError(ErrorCode.InvalidRequest, `one step must hold one model, got ${[...groups.keys()].join(', ')}`);
    const [model] = groups.keys();
    for (const it of items) if (this.seq(it.seqId).preempted) throw new MnemoError(ErrorCode.InvalidRequest, `sequence ${it.seqId} is preempted`);
    const results = await this.runtime(model).step(items, opts);
    for (const it of items) this.seqs.get(it.seqId)?.kvTokens.push(...it.tokens);
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
    if (s.salt !== undefined && ids === undefined) throw new MnemoError(ErrorCode.InvalidRequest, `sequence ${seqId} shares its prefix: reserve needs token ids`);
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

/** Whether the backend's tensors are plain host memory the native copy workers can reach. */
function hostMemoryBackend(backend: KernelBackend<unknown>): boolean {
  const probe = backend.alloc(1);
  try {
    return probe instanceof Float32Array;
  } finally {
    backend.free(probe);
  }
}
