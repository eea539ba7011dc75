import { chunkElems, ErrorCode, MnemoError, type DeviceChunkEvent, type ElasticMember } from '@mnemo/kv-core';
import type { KernelBackend } from '@mnemo/native-cuda';
import type {
  CrossModelPlan,
  Engine,
  EngineLayerStream,
  EngineChunkEvent,
  KvBudget,
  KvStaging,
  ServedModel,
  PrefillInput,
  TokenOutput,
} from '../engine.interface.js';
import { checkDrawOffset } from '../engine.interface.js';
import { elasticSpec } from '../model/device-budget.js';
import { KvSwapper } from './kv.swapper.js';
import type { ModelWeights } from '../weights/model-weights.js';
import { ModelRuntime } from './model.runtime.js';
import { TokenSampler } from './token.sampler.js';
import { StreamedSequences } from './layer-stream/streamed-sequences.js';
import { chunkStaging } from '../staging/chunk.staging.js';
import { crossModelPlan, prefillCrossPrefix, type CrossModelModels } from './cross-model.prefix.js';
import { restoreLayer, type PlannedRestore, type RestoringSequences } from './paged-kv.restore.js';
import { ReferenceSequences } from './reference-sequences.base.js';
import { hostMemoryBackend, resolveEngineOptions, type ReferenceEngineOptions } from './reference-engine.options.js';
import { prefillOutputs } from './prefill.outputs.js';

export type { ReferenceEngineOptions } from './reference-engine.options.js';

/**
 * The reference engine: real Llama-family transformers on a KernelBackend, with a
 * paged block-major KV cache per model. Besides the Engine contract it exposes the
 * lower-level surface the node-manager's KV store drives: per-step hooks for
 * layer-wise loads, KV import/export in the chunk payload layout, E-cache capture
 * and DroidSpeak partial prefill (inherited from {@link ReferenceSequences}).
 */
export class ReferenceEngine extends ReferenceSequences implements Engine {
  readonly kind = 'reference' as const;
  private readonly chunkListeners = new Set<(e: EngineChunkEvent) => void>();
  readonly swap?: KvSwapper;
  readonly layerStream?: EngineLayerStream;
  readonly staging: KvStaging = chunkStaging({
    ledger: (model) => this.runtime(model).cache.ledger,
    payloadElems: (model) => chunkElems(this.kvLayout(model)),
    write: (model, ids, payload) => this.runtime(model).cache.writeBlocks(ids, payload),
  });
  private readonly streams?: StreamedSequences;
  /** What a prefill's layer-wise restore sees of the sequences (paged-kv.restore.ts). */
  private readonly restoring: RestoringSequences = {
    has: (seqId) => this.seqs.has(seqId),
    cache: (seqId) => this.runtime(this.seq(seqId).model).cache,
    release: (seqId) => this.release(seqId),
  };
  /** What a prefill's DroidSpeak prefix sees of the models and sequences (cross-model.prefix.ts). */
  private readonly crossModels: CrossModelModels = {
    runtime: (model) => this.runtime(model),
    servedConfig: (model) => this.runtimes.get(model)?.config,
    cachedTokens: (input) => this.cachedTokens(input),
    kvTokens: (seqId) => this.seq(seqId).kvTokens,
  };

  constructor(
    readonly backend: KernelBackend<unknown>,
    weights: readonly ModelWeights[],
    kvBlocks: number | Readonly<Record<string, number>>,
    extra: Pick<ReferenceEngineOptions, 'blockGroups' | 'swap' | 'prefixCacheBlocks' | 'layerStream' | 'onStep'> = {},
    /** Per model, blocks its tensor reserves beyond its start (an elastic cache on a node budget). */
    private readonly reserve?: Readonly<Record<string, number>>,
  ) {
    super();
    this.stepListener = extra.onStep;
    for (const w of weights) {
      const id = w.config.id;
      if (this.runtimes.has(id)) throw new MnemoError(ErrorCode.Conflict, `model ${id} listed twice`);
      const blocks = typeof kvBlocks === 'number' ? kvBlocks : kvBlocks[id];
      if (!Number.isInteger(blocks) || blocks <= 0) throw new RangeError(`kvBlocks for ${id} must be a positive integer, got ${blocks}`);
      const onChunk = (e: DeviceChunkEvent) => {
        for (const l of this.chunkListeners) l({ ...e, model: id });
      };
      this.runtimes.set(
        id,
        new ModelRuntime(
          backend,
          w,
          blocks,
          this.counters,
          onChunk,
          Math.max(blocks, reserve?.[id] ?? blocks),
          extra.blockGroups ? { groupBlocks: extra.blockGroups } : undefined,
        ),
      );
      if (extra.prefixCacheBlocks !== undefined) this.runtimes.get(id)!.cache.ledger.blocks.setMaxCached(extra.prefixCacheBlocks);
    }
    if (extra.swap && hostMemoryBackend(backend)) {
      this.swap = new KvSwapper(
        extra.swap,
        (m) => this.runtime(m) as ModelRuntime<Float32Array>,
        (id) => this.seqs.get(id),
      );
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
    const { backend, weights, kvBlocks, reserve } = resolveEngineOptions(opts);
    return new ReferenceEngine(backend, weights, kvBlocks, opts, reserve);
  }

  /**
   * The models' caches as elastic members (their block managers resize in place), when the
   * engine was built on one device budget; empty otherwise.
   */
  elasticMembers(): ElasticMember[] {
    if (!this.reserve) return [];
    return [...this.runtimes.values()].map((rt) => ({
      ...elasticSpec(rt.config),
      blocks: rt.cache.ledger.blocks,
      maxBlocks: rt.cache.reserveBlocks,
    }));
  }

  models(): readonly ServedModel[] {
    return [...this.runtimes.values()].map(({ config: c }) => ({
      id: c.id,
      engine: 'reference',
      vocabSize: c.vocab,
      maxContext: c.maxContext,
      eosTokenId: c.eosTokenId,
    }));
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
    const plans = new Map<string, PlannedRestore>();
    const crosses = new Map<string, CrossModelPlan>();
    const failed = new Set<string>();
    let ok = false;
    const blockedBefore = this.counters.blockedIoMs;
    try {
      const rest = new Map<string, readonly number[]>();
      const cached = new Map<string, number>();
      for (const input of batch) {
        const cross = crossModelPlan(this.crossModels, input);
        // Approximate KV must never be served as this model's own: such a sequence does not share.
        this.openSequence(input.seqId, input.model, input.sampling, cross ? undefined : input.cacheSalt);
        opened.push(input.seqId);
        if (cross) {
          crosses.set(input.seqId, cross);
          await prefillCrossPrefix(this.crossModels, input, cross);
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
            throw new MnemoError(
              ErrorCode.InvalidRequest,
              `restore of ${input.seqId} must end in (${hit}, ${input.tokens.length}), got ${plan.until}`,
            );
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
        const hooks =
          restoring.length === 0 ? {} : { beforeLayer: (l: number) => restoreLayer(this.restoring, restoring, plans, slots, l, failed) };
        const L = this.runtime(model).config.layers;
        const capture = [...new Set(group.filter(wantsE).flatMap((id) => inputs.get(id)!.captureE!))].filter(
          (l) => Number.isInteger(l) && l > 0 && l < L,
        );
        const results = await this.step(
          group.map((seqId) => ({ seqId, tokens: rest.get(seqId)! })),
          { ...hooks, ...(capture.length > 0 ? { captureLayers: capture } : {}) },
        );
        for (const r of results) {
          if (!this.seqs.has(r.seqId)) continue;
          outputs.set(r.seqId, this.sample(r.seqId, r.logits));
          if (wantsE(r.seqId) && r.eCache.size > 0)
            eCaches.set(r.seqId, new Map([...r.eCache].filter(([l]) => inputs.get(r.seqId)!.captureE!.includes(l))));
        }
      }
      ok = true;
      return prefillOutputs(batch, { outputs, cached, plans, crosses, eCaches });
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
    if (contextBlocks * 16 > rt.config.maxContext + 15)
      throw new MnemoError(ErrorCode.PromptTooLong, `${contextBlocks} blocks exceed ${rt.config.id}'s context of ${rt.config.maxContext}`);
    if (this.seqs.has(input.seqId)) throw new MnemoError(ErrorCode.Conflict, `sequence ${input.seqId} already exists`);
    this.seqs.set(input.seqId, {
      model: input.model,
      sampler: new TokenSampler(input.sampling),
      kvTokens: [],
      pending: null,
      preempted: false,
      swapped: false,
      streamed: true,
    });
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
      const items = group
        .filter((seqId) => this.seqs.has(seqId))
        .map((seqId) => {
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

  override release(seqId: string): void {
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
}
