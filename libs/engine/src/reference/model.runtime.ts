import { ErrorCode, MnemoError, type BlockGroupOptions, type DeviceChunkEvent } from '@mnemo/kv-core';
import type { KernelBackend } from '@mnemo/native-cuda';
import type { ModelConfig } from '../model/model-config.js';
import type { ModelWeights } from '../weights/model-weights.js';
import { DeviceModel } from './device-model.js';
import { ForwardPass } from './forward.pass.js';
import { HookClock, type EngineStats, type LayerHooks } from './layer-hooks.js';
import { PagedKvCache } from './paged-kv.cache.js';

/** Rows of one sequence in a step: the new tokens appended to its context. */
export interface StepItem {
  readonly seqId: string;
  readonly tokens: readonly number[];
  /** Which rows' logits to return: the last (default), every new row, or none. */
  readonly logits?: 'last' | 'all' | 'none';
}

export interface StepOptions extends LayerHooks {
  /** Layers whose entering hidden state (E cache, `[token][d_model]`) to return; L means after the last layer. */
  readonly captureLayers?: readonly number[];
}

export interface SeqStepResult {
  readonly seqId: string;
  /** `[rows, vocab]`: one row for 'last', one per new token for 'all', empty for 'none'. */
  readonly logits: Float32Array;
  /** Layer → hidden state entering it for this step's rows, `[rows][d_model]`. */
  readonly eCache: ReadonlyMap<number, Float32Array>;
}

/** One model on one backend: its weights, its paged KV cache, and batched stepping over both. */
export class ModelRuntime<T> {
  readonly config: ModelConfig;
  readonly model: DeviceModel<T>;
  readonly cache: PagedKvCache<T>;
  /** Sequences inside a running pass; releasing one is deferred until the pass ends. */
  private readonly busy = new Set<string>();
  private readonly deferred = new Set<string>();

  constructor(
    readonly backend: KernelBackend<T>,
    weights: ModelWeights,
    kvBlocks: number,
    readonly stats: EngineStats,
    onChunk?: (e: DeviceChunkEvent) => void,
    reserveBlocks = kvBlocks,
    grouping?: BlockGroupOptions,
  ) {
    this.config = weights.config;
    this.model = new DeviceModel(backend, weights);
    this.cache = new PagedKvCache(backend, this.config, kvBlocks, onChunk, reserveBlocks, grouping);
  }

  /**
   * Appends each item's tokens to its sequence and runs them as one packed batch,
   * layer by layer with the hooks overlapped: `beforeLayer(l + 1)` runs on the JS thread
   * while layer l computes on the backend (the CPU backend's own threads), so the event
   * loop stays free during a pass. On a thrown error after the KV was appended the
   * sequences' caches are unspecified: release them.
   */
  async step(items: readonly StepItem[], opts: StepOptions = {}): Promise<SeqStepResult[]> {
    this.checkItems(items);
    const capture = this.checkCapture(opts.captureLayers ?? []);
    const t0 = performance.now();
    const slots = this.cache.appendAll(items.map((it) => ({ seqId: it.seqId, tokens: it.tokens.length, ids: it.tokens })));
    const ids = items.map((it) => it.seqId);
    this.enter(ids);
    const pass = new ForwardPass(
      this.backend,
      this.model,
      this.cache,
      items.map((it, i) => ({ seqId: it.seqId, rows: it.tokens.length, contextLen: this.cache.length(it.seqId), slots: slots[i] })),
    );
    const clock = new HookClock(opts, this.stats);
    const captured = new Map<number, Float32Array>();
    try {
      const first = clock.startBefore(0);
      pass.embed(Int32Array.from(items.flatMap((it) => it.tokens)));
      if (capture.has(0)) captured.set(0, pass.readHidden());
      await clock.wait(first);
      const L = this.config.layers;
      for (let l = 0; l < L; l++) {
        const next = l + 1 < L ? clock.startBefore(l + 1) : undefined;
        await pass.runLayer(l);
        clock.after(l);
        if (capture.has(l + 1)) captured.set(l + 1, pass.readHidden());
        await clock.wait(next);
      }
      const results = await this.collect(pass, items, captured);
      await clock.drainStores();
      // Every layer's KV of these rows is written now: their full blocks may be shared. Not those
      // of a sequence released meanwhile: a restore stops importing into it, so its rows may be
      // missing layers, and a name would serve them to the next request with that prefix.
      this.cache.commit(ids.filter((id) => !this.deferred.has(id)));
      return results;
    } finally {
      pass.dispose();
      this.leave(ids);
      this.stats.steps++;
      for (const it of items) {
        if (it.tokens.length === 1) this.stats.decodeTokens++;
        else this.stats.prefillTokens += it.tokens.length;
      }
      this.stats.forwardMs += performance.now() - t0;
    }
  }

  /**
   * Frees a sequence's blocks, or — while a pass is still writing them (a request
   * cancelled during a layer-wise load) — as soon as that pass ends, so the blocks
   * cannot be handed to another sequence mid-pass.
   */
  release(seqId: string): void {
    if (this.busy.has(seqId)) this.deferred.add(seqId);
    else this.cache.release(seqId);
  }

  /** True while a pass that includes the sequence runs. */
  isBusy(seqId: string): boolean {
    return this.busy.has(seqId);
  }

  /** Marks sequences as inside a pass (see {@link release}). */
  enter(seqIds: readonly string[]): void {
    for (const id of seqIds) this.busy.add(id);
  }

  leave(seqIds: readonly string[]): void {
    for (const id of seqIds) {
      this.busy.delete(id);
      if (this.deferred.delete(id)) this.cache.release(id);
    }
  }

  free(): void {
    this.model.free();
    this.cache.free();
  }

  private async collect(pass: ForwardPass<T>, items: readonly StepItem[], captured: Map<number, Float32Array>): Promise<SeqStepResult[]> {
    const rowIds: number[] = [];
    items.forEach((it, i) => {
      const start = pass.rowOffset(i);
      const mode = it.logits ?? 'last';
      if (mode === 'last') rowIds.push(start + it.tokens.length - 1);
      else if (mode === 'all') for (let r = 0; r < it.tokens.length; r++) rowIds.push(start + r);
    });
    const logits = await pass.logits(Int32Array.from(rowIds));
    const V = this.config.vocab;
    const d = this.config.dModel;
    let at = 0;
    return items.map((it, i) => {
      const mode = it.logits ?? 'last';
      const n = mode === 'last' ? 1 : mode === 'all' ? it.tokens.length : 0;
      const mine = logits.slice(at * V, (at + n) * V);
      at += n;
      const start = pass.rowOffset(i);
      const eCache = new Map<number, Float32Array>();
      for (const [layer, h] of captured) eCache.set(layer, h.slice(start * d, (start + it.tokens.length) * d));
      return { seqId: it.seqId, logits: mine, eCache };
    });
  }

  private checkItems(items: readonly StepItem[]): void {
    if (items.length === 0) throw new MnemoError(ErrorCode.InvalidRequest, 'empty step');
    const seen = new Set<string>();
    for (const it of items) {
      if (seen.has(it.seqId)) throw new MnemoError(ErrorCode.InvalidRequest, `sequence ${it.seqId} twice in one step`);
      seen.add(it.seqId);
      if (it.tokens.length === 0) throw new MnemoError(ErrorCode.InvalidRequest, `sequence ${it.seqId}: no tokens`);
      this.checkTokens(it.tokens);
      const len = this.cache.length(it.seqId) + it.tokens.length;
      if (len > this.config.maxContext) {
        throw new MnemoError(
          ErrorCode.PromptTooLong,
          `sequence ${it.seqId}: ${len} tokens exceed ${this.config.id}'s context of ${this.config.maxContext}`,
        );
      }
    }
  }

  checkTokens(tokens: readonly number[]): void {
    for (const t of tokens) {
      if (!Number.isInteger(t) || t < 0 || t >= this.config.vocab) {
        throw new MnemoError(ErrorCode.InvalidRequest, `token id ${t} outside ${this.config.id}'s vocabulary (${this.config.vocab})`);
      }
    }
  }

  private checkCapture(layers: readonly number[]): Set<number> {
    for (const l of layers) {
      if (!Number.isInteger(l) || l < 0 || l > this.config.layers) {
        throw new MnemoError(ErrorCode.InvalidRequest, `cannot capture the E cache at layer ${l} of ${this.config.layers}`);
      }
    }
    return new Set(layers);
  }
}
