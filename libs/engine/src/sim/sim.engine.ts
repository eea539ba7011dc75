import { chunkElems, ErrorCode, KvBlockLedger, MnemoError, type ElasticMember } from '@mnemo/kv-core';
import type { Engine, KvRestorePlan, KvStaging, ServedModel, PrefillInput, TokenOutput } from '../engine.interface.js';
import { findSyntheticModel } from '../model/model.catalog.js';
import { budgetReserve, elasticSpec, isDeviceKvBudget, splitDeviceBudget, type DeviceKvBudget } from '../model/device-budget.js';
import { attendedTokens, DEFAULT_SIM_COST, decodeCostMs, prefillCostMs, validateSimCost, type SimCostModel } from './sim-cost.model.js';
import { SimTokenStream } from './sim-token.stream.js';
import { checkDrawOffset } from '../engine.interface.js';
import { modelSeed, positionHashes, simKvLayoutFor, validateSimKvLayout, type SimKvLayout } from './sim-kv.content.js';
import { runRestoringPass, type SimRestore } from './sim-kv.restore.js';
import { chunkStaging } from '../staging/chunk.staging.js';
import { SimKvLedgers, type SimSeq } from './sim-kv.ledgers.js';

/** One executed engine step, for metrics and tests that must prove batching happened. */
export interface SimStep {
  readonly kind: 'prefill' | 'decode';
  readonly seqIds: readonly string[];
  readonly costMs: number;
}

export interface SimEngineOptions {
  /** Served model ids, from the synthetic catalog (vocabulary, context length, EOS). Default `['mnemo-tiny']`. */
  readonly models?: readonly string[];
  readonly cost?: Partial<SimCostModel>;
  /** Chance that each sampled token is EOS; 0 (default) never stops early. */
  readonly eosProbability?: number;
  /** The clock port: waits the modelled time. Default: a real timer. */
  readonly sleep?: (ms: number) => Promise<void>;
  readonly onStep?: (step: SimStep) => void;
  /**
   * Modelled device KV capacity per model in blocks of 16 tokens (default 1024, the reference
   * engine's), or one device budget split between the models (modelled as fp16).
   */
  readonly kvBlocks?: number | DeviceKvBudget;
  /** Context length of every served model (default: the catalog's); long multi-turn workloads want more. */
  readonly maxContext?: number;
  /**
   * KV bytes (off by default): one layout for every served model, or one per model id. A model
   * with a layout exports whole chunks (`exportChunk`, `kvLayout`) and honours `PrefillInput.restore`;
   * its KV content is a deterministic function of model, position and token history (sim-kv.content.ts).
   */
  readonly kvBytes?: SimKvLayout | Readonly<Record<string, SimKvLayout>>;
  /** The clock restores read blocked time from (ms). Default: performance.now. */
  readonly now?: () => number;
  /**
   * Most cached (unreferenced, reusable) blocks each model keeps on the device; a finished
   * sequence's blocks past it are evicted as they are released, and its next turn finds them
   * in the offload tiers or recomputes (0: nothing is kept between requests, InferCept's swap-out).
   * Default: unbounded, kept until the space is needed.
   */
  readonly prefixCacheBlocks?: number;
}

export const DEFAULT_SIM_MODELS: readonly string[] = ['mnemo-tiny'];

const DEFAULT_SIM_KV_BLOCKS = 1024;

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Cost-model engine with the Engine contract: no weights, no math, but real waiting time and
 * reproducible tokens. Calls are serialised like work on one device. Device KV is modelled with
 * the same block ledger as the reference engine — capacity, prefix-cache hits (only uncached
 * prompt tokens cost prefill time), preemption — without device bytes ({@link SimKvLedgers}); with `kvBytes` a whole
 * chunk is regenerated from its tokens when exported, and restored KV is checked against them. A sequence released
 * while its step is in flight is left out of that step's outputs (cancellation wins over the result).
 */
export class SimEngine extends SimKvLedgers implements Engine {
  readonly kind = 'sim' as const;
  private readonly modelInfos: ServedModel[];
  private readonly cost: SimCostModel;
  private readonly eosProbability: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly now: () => number;
  /** Per model, blocks it may grow to on a node budget (the sim has no tensor; this bounds lending). */
  private reserve?: Readonly<Record<string, number>>;
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;
  /**
   * Prefetched chunks staged in the modelled device cache: only the ledger's blocks are taken (the
   * sim keeps no device bytes; a taken-over chunk's content is its key's, as for any prefix hit).
   */
  readonly staging: KvStaging = chunkStaging({
    ledger: (model) => this.ledger(model),
    payloadElems: (model) => {
      const layout = this.kvLayouts.get(model);
      return layout && chunkElems(layout);
    },
  });

  constructor(private readonly options: SimEngineOptions = {}) {
    super();
    this.modelInfos = (options.models ?? DEFAULT_SIM_MODELS).map((id) => {
      const spec = findSyntheticModel(id);
      if (!spec) throw new RangeError(`sim engine: unknown model ${JSON.stringify(id)} (not in the synthetic catalog)`);
      return {
        id,
        engine: 'sim',
        vocabSize: spec.config.vocab,
        maxContext: options.maxContext ?? spec.config.maxContext,
        eosTokenId: spec.config.eosTokenId,
      };
    });
    if (options.maxContext !== undefined && !(Number.isInteger(options.maxContext) && options.maxContext > 1)) {
      throw new RangeError(`sim engine: maxContext must be an integer > 1, got ${options.maxContext}`);
    }
    this.cost = validateSimCost({ ...DEFAULT_SIM_COST, ...options.cost });
    const p = options.eosProbability ?? 0;
    if (!(p >= 0 && p <= 1)) throw new RangeError(`sim engine: eosProbability must be in [0, 1], got ${p}`);
    this.eosProbability = p;
    this.sleep = options.sleep ?? realSleep;
    this.now = options.now ?? (() => performance.now());
    const opt = options.kvBlocks ?? DEFAULT_SIM_KV_BLOCKS;
    const configs = this.modelInfos.map((m) => findSyntheticModel(m.id)!.config);
    const split = isDeviceKvBudget(opt) ? splitDeviceBudget(configs, opt, 2) : null;
    if (isDeviceKvBudget(opt)) this.reserve = budgetReserve(configs, opt, 2);
    if (!split && !(Number.isInteger(opt) && (opt as number) > 0))
      throw new RangeError(`sim engine: kvBlocks must be a positive integer, got ${String(opt)}`);
    for (const m of this.modelInfos) {
      const layout = simKvLayoutFor(options.kvBytes, m.id);
      if (layout) this.kvLayouts.set(m.id, validateSimKvLayout(layout, `sim engine: kvBytes of ${m.id}`));
      const kvBlocks = split ? split[m.id]! : (opt as number);
      const ledger = new KvBlockLedger(m.id, kvBlocks, (e) => {
        for (const l of this.chunkListeners) l({ ...e, model: m.id });
      });
      if (options.prefixCacheBlocks !== undefined) ledger.blocks.setMaxCached(options.prefixCacheBlocks);
      this.ledgers.set(m.id, ledger);
    }
  }

  /** As the reference engine's: the modelled caches as elastic members on a node budget. */
  elasticMembers(): ElasticMember[] {
    const reserve = this.reserve;
    if (!reserve) return [];
    return this.modelInfos.map((m) => ({
      ...elasticSpec(findSyntheticModel(m.id)!.config),
      blocks: this.ledgers.get(m.id)!.blocks,
      maxBlocks: reserve[m.id]!,
    }));
  }

  models(): readonly ServedModel[] {
    return this.modelInfos;
  }

  prefill(batch: readonly PrefillInput[]): Promise<TokenOutput[]> {
    return this.serial(async () => {
      const computed: number[] = [];
      let attended = 0;
      const cached = new Map<string, number>();
      const hits = new Map<string, number>();
      const admitted: string[] = [];
      const restores: SimRestore[] = [];
      const failed = new Set<string>();
      let ok = false;
      let blockedMs = 0;
      try {
        for (const input of batch) {
          const seq = this.admit(input);
          admitted.push(input.seqId);
          const hit = seq.salt === undefined ? 0 : seq.ledger.attachPrefix(input.seqId, input.tokens);
          seq.kvTokens.push(...input.tokens.slice(0, hit));
          const restore = this.restoreOf(input, hit);
          if (restore) restores.push(restore);
          const from = restore?.plan.until ?? hit;
          hits.set(input.seqId, hit);
          cached.set(input.seqId, from);
          // Only computed tokens cost prefill time; restored ones arrive over the pass.
          computed.push(input.tokens.length - from);
          attended += attendedTokens(from, input.tokens.length);
        }
        // Blocks of restored positions are named only once their bytes arrived and checked.
        this.appendAll(
          batch.map((b) => ({ seqId: b.seqId, ids: b.tokens.slice(hits.get(b.seqId)) })),
          restores.length === 0,
        );
        const ms = prefillCostMs(this.cost, computed, attended);
        if (restores.length === 0) await this.wait(ms);
        else {
          // A sequence whose restore failed is released now and gets no output; the pass goes on for the rest.
          const drop = (id: string) => {
            failed.add(id);
            this.release(id);
          };
          blockedMs = await runRestoringPass(
            restores,
            ms,
            { now: this.now, sleep: this.sleep },
            (id) => this.seqs.has(id),
            this.cost.restorePerChunkMs,
            drop,
          );
        }
        const ids = batch.map((b) => b.seqId);
        if (restores.length > 0) for (const id of ids) this.seqs.get(id)?.ledger.commit([id]);
        this.options.onStep?.({ kind: 'prefill', seqIds: ids, costMs: ms });
        ok = true;
        return this.sample(ids).map((o) => ({
          ...o,
          cachedTokens: cached.get(o.seqId)!,
          restoredTokens: cached.get(o.seqId)! - hits.get(o.seqId)!,
        }));
      } catch (e) {
        for (const id of admitted) this.release(id);
        throw e;
      } finally {
        for (const r of restores) r.plan.done?.(ok && !failed.has(r.seqId), blockedMs);
      }
    });
  }

  decode(seqIds: readonly string[]): Promise<TokenOutput[]> {
    return this.serial(async () => {
      const contexts = seqIds.map((id) => {
        const seq = this.seqs.get(id);
        if (!seq) throw new RangeError(`sim engine: decode of unknown sequence ${id}`);
        if (seq.preempted) throw new MnemoError(ErrorCode.InvalidRequest, `sim engine: sequence ${id} is preempted: resume it first`);
        if (seq.kvTokens.length + 1 >= seq.model.maxContext)
          throw new RangeError(`sim engine: sequence ${id} is at the context limit ${seq.model.maxContext}`);
        return seq.kvTokens.length + 1;
      });
      this.appendAll(seqIds.map((id) => ({ seqId: id, ids: [this.seqs.get(id)!.pending] })));
      const ms = decodeCostMs(this.cost, contexts);
      await this.wait(ms);
      this.options.onStep?.({ kind: 'decode', seqIds, costMs: ms });
      return this.sample(seqIds);
    });
  }

  resume(seqIds: readonly string[]): Promise<void> {
    return this.serial(async () => {
      const computed: number[] = [];
      const items: Array<{ seqId: string; ids: number[] }> = [];
      const history = new Map<string, number[]>();
      let attended = 0;
      for (const id of seqIds) {
        const seq = this.seq(id);
        if (!seq.preempted) continue;
        const tokens = seq.kvTokens.splice(0);
        history.set(id, tokens);
        const hit = seq.salt === undefined ? 0 : seq.ledger.attachPrefix(id, tokens);
        seq.kvTokens.push(...tokens.slice(0, hit));
        items.push({ seqId: id, ids: tokens.slice(hit) });
        computed.push(tokens.length - hit);
        attended += attendedTokens(hit, tokens.length);
      }
      try {
        this.appendAll(items);
      } catch (e) {
        // Back to preempted and empty, history intact, so a later resume starts clean.
        for (const [id, tokens] of history) {
          const seq = this.seqs.get(id)!;
          seq.ledger.release(id);
          seq.ledger.open(id, seq.salt);
          seq.kvTokens.splice(0, seq.kvTokens.length, ...tokens);
        }
        throw e;
      }
      for (const it of items) this.seqs.get(it.seqId)!.preempted = false;
      const ms = prefillCostMs(this.cost, computed, attended);
      await this.wait(ms);
      this.options.onStep?.({ kind: 'prefill', seqIds: items.map((it) => it.seqId), costMs: ms });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.queue.catch(() => undefined);
    for (const id of [...this.seqs.keys()]) this.release(id);
  }

  /** The input's restore plan past the device hit, when its model keeps KV bytes; a plan ending out of range is refused. */
  private restoreOf(input: PrefillInput, hit: number): SimRestore | undefined {
    const layout = this.kvLayouts.get(input.model);
    const plan: KvRestorePlan | undefined = layout ? input.restore?.(hit) : undefined;
    if (!layout || !plan) return undefined;
    if (!Number.isInteger(plan.until) || plan.until <= hit || plan.until >= input.tokens.length) {
      plan.done?.(false, 0);
      throw new MnemoError(
        ErrorCode.InvalidRequest,
        `restore of ${input.seqId} must end in (${hit}, ${input.tokens.length}), got ${plan.until}`,
      );
    }
    return { seqId: input.seqId, plan, from: hit, layout, hashes: positionHashes(modelSeed(input.model), input.tokens, plan.until) };
  }

  private admit(input: PrefillInput): SimSeq {
    const model = this.modelInfos.find((m) => m.id === input.model);
    if (!model) throw new MnemoError(ErrorCode.ModelNotFound, `model ${input.model} is not served by this engine`);
    if (this.seqs.has(input.seqId)) throw new RangeError(`sim engine: sequence ${input.seqId} already prefilled`);
    if (input.tokens.length === 0) throw new MnemoError(ErrorCode.InvalidRequest, 'empty prompt');
    if (input.tokens.length >= model.maxContext) {
      throw new MnemoError(
        ErrorCode.PromptTooLong,
        `prompt of ${input.tokens.length} tokens leaves no room in context ${model.maxContext}`,
      );
    }
    const { seed, temperature } = input.sampling;
    checkDrawOffset(input);
    const stream = new SimTokenStream(
      seed,
      input.tokens,
      temperature,
      model.eosTokenId,
      this.eosProbability,
      input.sampling.drawOffset ?? 0,
    );
    const ledger = this.ledger(model.id);
    ledger.open(input.seqId, input.cacheSalt);
    const seq: SimSeq = {
      model,
      ledger,
      stream,
      salt: input.cacheSalt,
      kvTokens: [],
      pending: 0,
      preempted: false,
    };
    this.seqs.set(input.seqId, seq);
    return seq;
  }

  /** A zero cost on the real timer costs nothing (setTimeout(0) would add about 1 ms per step); an injected clock port always hears it. */
  private async wait(ms: number): Promise<void> {
    if (ms > 0 || this.options.sleep) await this.sleep(ms);
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new Error('sim engine is closed'));
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }
}
