import { ErrorCode, MnemoError, layerStreamLimit, planStreamStart, type LayerStreamShape } from '@mnemo/kv-core';
import type { KernelBackend, KvGeometry } from '@mnemo/native-cuda';
import type { LayerStreamCounters } from '../../engine.interface.js';
import type { ModelRuntime } from '../model.runtime.js';
import { DeviceRegionBacking, HostBacking, type LayerKvBacking } from './layer-kv.backing.js';
import { LayerStreamCache } from './layer-stream.cache.js';

export interface LayerStreamSettings {
  /** Resident layer planes of a streamed sequence (≥ 2, at most every model's layer count). */
  readonly window: number;
  /** Host memory per model for the full-layer KV of a streamed sequence the device cannot back. */
  readonly hostBytes: number;
}

/** One model's streamed sequence and everything it holds. */
interface ActiveStream {
  readonly seqId: string;
  readonly rt: ModelRuntime<unknown>;
  readonly cache: LayerStreamCache<unknown>;
  /** Blocks of the model's own cache set aside for the planes' memory (the planes are their own tensor). */
  readonly planeBlocks: number[];
  busy: boolean;
  released: boolean;
}

/** KV elements of the host backing are fp32 (`HostBacking` keeps Float32Array). */
const HOST_BYTES_PER_ELEMENT = 4;

/**
 * Contexts longer than a model's device cache, run through a {@link LayerStreamCache}: one
 * streamed sequence per model at a time (its own batch). Starting one takes, from the model's own
 * block manager (lent units included when the cache grew on them), the plane memory
 * `⌈C·W/L⌉` as reserved blocks and as many backing blocks as are free after it; the rest of its
 * full-layer KV goes to a per-model host backing. Everything is taken at start, so a started
 * sequence never runs out mid-decode, and everything goes back at release.
 *
 * NOTE: the planes are a tensor of their own; the blocks set aside account for their bytes. On a
 * CUDA backend that is memory beyond the cache's region (the cache's reserved blocks stay idle).
 */
export class StreamedSequences {
  private readonly byModel = new Map<string, ActiveStream>();
  private readonly bySeq = new Map<string, ActiveStream>();
  private readonly counters = new Map<string, LayerStreamCounters>();

  constructor(
    private readonly backend: KernelBackend<unknown>,
    private readonly settings: LayerStreamSettings,
    private readonly bytesPerElement: number,
  ) {}

  /** Rejects a window some model cannot hold (a configuration error at start). */
  check(rt: ModelRuntime<unknown>): void {
    const { layers } = rt.config;
    if (!Number.isInteger(this.settings.window) || this.settings.window < 2 || this.settings.window > layers) {
      throw new RangeError(`layer stream window must be in [2, ${layers}] for ${rt.config.id}, got ${this.settings.window}`);
    }
  }

  /** Longest streamed context (blocks) of the model with `deviceBlocks` of its cache. */
  limit(rt: ModelRuntime<unknown>, deviceBlocks: number): number {
    return layerStreamLimit(this.shape(rt), deviceBlocks, this.hostBlocks(rt));
  }

  /** Whether a streamed sequence of `contextBlocks` can start now. */
  canStart(rt: ModelRuntime<unknown>, contextBlocks: number): boolean {
    return (
      !this.byModel.has(rt.config.id) &&
      planStreamStart(this.shape(rt), contextBlocks, rt.cache.ledger.blocks.numAvailable, this.hostBlocks(rt)) !== null
    );
  }

  has(seqId: string): boolean {
    return this.bySeq.has(seqId);
  }

  stats(model: string): LayerStreamCounters {
    return { ...(this.counters.get(model) ?? { stallSeconds: 0, sequences: 0, bytes: 0 }) };
  }

  /** Opens the sequence with every block of a `contextBlocks` context and runs its prompt; logits of the last row. */
  async start(rt: ModelRuntime<unknown>, seqId: string, tokens: readonly number[], contextBlocks: number): Promise<Float32Array> {
    const model = rt.config.id;
    if (this.byModel.has(model)) throw new MnemoError(ErrorCode.Overloaded, `${model} already streams a sequence`);
    const plan = planStreamStart(this.shape(rt), contextBlocks, rt.cache.ledger.blocks.numAvailable, this.hostBlocks(rt));
    if (!plan)
      throw new MnemoError(ErrorCode.Overloaded, `not enough device or host memory to stream ${contextBlocks} blocks of ${model} now`);
    const blocks = rt.cache.ledger.blocks;
    const planeBlocks = blocks.allocate(plan.planeBlocks);
    if (!planeBlocks) throw new MnemoError(ErrorCode.Overloaded, `no device blocks for the planes of ${seqId}`);
    let cache: LayerStreamCache<unknown> | undefined;
    try {
      const c = rt.config;
      const geom: KvGeometry = { numLayers: c.layers, numKvHeads: c.kvHeads, headDim: c.headDim, blockSize: 16 };
      const fullBlock = c.layers * 2 * 16 * c.kvHeads * c.headDim;
      // Full block b of the cache is [layer][K|V][token][…]: one pseudo-block per layer, in order.
      const backings: Array<LayerKvBacking<unknown>> = [
        new DeviceRegionBacking(this.backend, rt.cache.tensor, geom, blocks, (b) => b * fullBlock, 'local'),
      ];
      if (plan.hostBacking > 0) backings.push(new HostBacking(this.backend, geom, plan.hostBacking));
      cache = new LayerStreamCache(this.backend, rt.model, { blocks: contextBlocks, window: this.settings.window, backings });
      cache.open(seqId, contextBlocks);
    } catch (e) {
      cache?.free();
      blocks.release(planeBlocks);
      throw e;
    }
    const active: ActiveStream = { seqId, rt, cache, planeBlocks, busy: false, released: false };
    this.byModel.set(model, active);
    this.bySeq.set(seqId, active);
    this.counter(model).sequences++;
    return this.step(seqId, tokens);
  }

  /** Appends tokens through the stream; logits of the last row. */
  async step(seqId: string, tokens: readonly number[]): Promise<Float32Array> {
    const a = this.bySeq.get(seqId);
    if (!a) throw new MnemoError(ErrorCode.NotFound, `sequence ${seqId} is not streamed`);
    const before = { stall: a.cache.stats.stallMs, elements: a.cache.stats.elements };
    a.busy = true;
    try {
      return await a.cache.step(seqId, tokens);
    } finally {
      a.busy = false;
      const n = this.counter(a.rt.config.id);
      n.stallSeconds += (a.cache.stats.stallMs - before.stall) / 1000;
      n.bytes += (a.cache.stats.elements - before.elements) * this.bytesPerElement;
      if (a.released) this.free(a);
    }
  }

  /** Frees everything the sequence holds; while its pass runs, as soon as the pass ends. Idempotent. */
  release(seqId: string): void {
    const a = this.bySeq.get(seqId);
    if (!a || a.released) return;
    a.released = true;
    if (!a.busy) this.free(a);
  }

  /** Everything streamed sequences hold (engine close). */
  close(): void {
    for (const a of [...this.bySeq.values()]) this.release(a.seqId);
  }

  private free(a: ActiveStream): void {
    this.bySeq.delete(a.seqId);
    this.byModel.delete(a.rt.config.id);
    a.cache.free();
    a.rt.cache.ledger.blocks.release(a.planeBlocks);
  }

  private shape(rt: ModelRuntime<unknown>): LayerStreamShape {
    return { layers: rt.config.layers, window: this.settings.window };
  }

  private hostBlocks(rt: ModelRuntime<unknown>): number {
    const c = rt.config;
    return Math.floor(this.settings.hostBytes / (c.layers * 2 * 16 * c.kvHeads * c.headDim * HOST_BYTES_PER_ELEMENT));
  }

  private counter(model: string): LayerStreamCounters {
    let n = this.counters.get(model);
    if (!n) this.counters.set(model, (n = { stallSeconds: 0, sequences: 0, bytes: 0 }));
    return n;
  }
}
