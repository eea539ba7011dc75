import { blocksFor, ErrorCode, MnemoError } from '@mnemo/kv-core';
import type { Engine, ServedModel, PrefillInput, TokenOutput } from '../engine.interface.js';
import { findSyntheticModel } from '../model/model.catalog.js';
import { DEFAULT_SIM_COST, decodeCostMs, prefillCostMs, validateSimCost, type SimCostModel } from './sim-cost.model.js';
import { SimTokenStream } from './sim-token.stream.js';

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
  /** Modelled KV capacity in blocks of 16 tokens, for kvUsage (default 1024, the reference engine's). */
  readonly kvBlocks?: number;
  /** Context length of every served model (default: the catalog's); long multi-turn workloads want more. */
  readonly maxContext?: number;
}

interface SimSeq {
  readonly model: ServedModel;
  context: number;
  readonly stream: SimTokenStream;
}

export const DEFAULT_SIM_MODELS: readonly string[] = ['mnemo-tiny'];

const DEFAULT_SIM_KV_BLOCKS = 1024;

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Cost-model engine with the Engine contract: no weights, no math, but real waiting time and
 * reproducible tokens. Calls are serialised like work on one device. A sequence released while
 * its step is in flight is left out of that step's outputs (cancellation wins over the result).
 */
export class SimEngine implements Engine {
  readonly kind = 'sim' as const;
  private readonly modelInfos: ServedModel[];
  private readonly cost: SimCostModel;
  private readonly eosProbability: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly seqs = new Map<string, SimSeq>();
  private readonly kvBlocks: number;
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(private readonly options: SimEngineOptions = {}) {
    this.modelInfos = (options.models ?? DEFAULT_SIM_MODELS).map((id) => {
      const spec = findSyntheticModel(id);
      if (!spec) throw new RangeError(`sim engine: unknown model ${JSON.stringify(id)} (not in the synthetic catalog)`);
      return { id, engine: 'sim', vocabSize: spec.config.vocab, maxContext: options.maxContext ?? spec.config.maxContext, eosTokenId: spec.config.eosTokenId };
    });
    if (options.maxContext !== undefined && !(Number.isInteger(options.maxContext) && options.maxContext > 1)) {
      throw new RangeError(`sim engine: maxContext must be an integer > 1, got ${options.maxContext}`);
    }
    this.cost = validateSimCost({ ...DEFAULT_SIM_COST, ...options.cost });
    const p = options.eosProbability ?? 0;
    if (!(p >= 0 && p <= 1)) throw new RangeError(`sim engine: eosProbability must be in [0, 1], got ${p}`);
    this.eosProbability = p;
    this.sleep = options.sleep ?? realSleep;
    const kvBlocks = options.kvBlocks ?? DEFAULT_SIM_KV_BLOCKS;
    if (!Number.isInteger(kvBlocks) || kvBlocks <= 0) throw new RangeError(`sim engine: kvBlocks must be a positive integer, got ${kvBlocks}`);
    this.kvBlocks = kvBlocks;
  }

  models(): readonly ServedModel[] {
    return this.modelInfos;
  }

  /** Sequences currently held (prefilled and not released). */
  get activeSequences(): number {
    return this.seqs.size;
  }

  prefill(batch: readonly PrefillInput[]): Promise<TokenOutput[]> {
    return this.serial(async () => {
      for (const input of batch) this.admit(input);
      const ms = prefillCostMs(this.cost, batch.map((b) => b.tokens.length));
      await this.wait(ms);
      const ids = batch.map((b) => b.seqId);
      this.options.onStep?.({ kind: 'prefill', seqIds: ids, costMs: ms });
      return this.sample(ids);
    });
  }

  decode(seqIds: readonly string[]): Promise<TokenOutput[]> {
    return this.serial(async () => {
      const contexts = seqIds.map((id) => {
        const seq = this.seqs.get(id);
        if (!seq) throw new RangeError(`sim engine: decode of unknown sequence ${id}`);
        if (seq.context >= seq.model.maxContext) throw new RangeError(`sim engine: sequence ${id} is at the context limit ${seq.model.maxContext}`);
        return seq.context;
      });
      const ms = decodeCostMs(this.cost, contexts);
      await this.wait(ms);
      this.options.onStep?.({ kind: 'decode', seqIds, costMs: ms });
      return this.sample(seqIds);
    });
  }

  /** Blocks the live sequences' contexts would hold, over the modelled capacity (may exceed 1). */
  kvUsage(): number {
    let blocks = 0;
    for (const s of this.seqs.values()) blocks += blocksFor(s.context);
    return blocks / this.kvBlocks;
  }

  release(seqId: string): void {
    this.seqs.delete(seqId);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.queue.catch(() => undefined);
    this.seqs.clear();
  }

  private admit(input: PrefillInput): void {
    const model = this.modelInfos.find((m) => m.id === input.model);
    if (!model) throw new MnemoError(ErrorCode.ModelNotFound, `model ${input.model} is not served by this engine`);
    if (this.seqs.has(input.seqId)) throw new RangeError(`sim engine: sequence ${input.seqId} already prefilled`);
    if (input.tokens.length === 0) throw new MnemoError(ErrorCode.InvalidRequest, 'empty prompt');
    if (input.tokens.length >= model.maxContext) {
      throw new MnemoError(ErrorCode.PromptTooLong, `prompt of ${input.tokens.length} tokens leaves no room in context ${model.maxContext}`);
    }
    const { seed, temperature } = input.sampling;
    this.seqs.set(input.seqId, {
      model,
      context: input.tokens.length,
      stream: new SimTokenStream(seed, input.tokens, temperature, model.eosTokenId, this.eosProbability),
    });
  }

  /** One token per still-held sequence; each sampled token becomes part of its context. */
  private sample(ids: readonly string[]): TokenOutput[] {
    const out: TokenOutput[] = [];
    for (const seqId of ids) {
      const seq = this.seqs.get(seqId);
      if (!seq) continue;
      seq.context += 1;
      out.push({ seqId, token: seq.stream.next() });
    }
    return out;
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
