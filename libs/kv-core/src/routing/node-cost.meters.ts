import { BatchSlotMeter } from './batch-slot.meter.js';
import type { MeasuredCosts } from './node-load.js';
import { PassCostModel, type PrefillPass } from './pass-cost.model.js';
import { recomputeSpanMs } from './prefill.cost.js';
import { DEFAULT_ROUTING_COSTS } from './route.types.js';
import { CHUNK_TOKENS } from '../keys/chunk.constants.js';

/** A sequence of a prefill pass as the pass starts: its prompt and what it found cached or restores. */
export interface StartingSeq {
  readonly promptTokens: number;
  readonly cachedTokens: number;
}

/**
 * Everything a node measures of itself for routing, as its heartbeats report it: its costs per
 * chunk from its prefill passes (PassCostModel, pulled towards kv-core's defaults until passes
 * back them) and how often its full batch frees a slot (BatchSlotMeter). The live node and the
 * twin's nodes both keep one, so the scheduler prices either with the same figures.
 */
export class NodeCostMeters {
  private readonly slots: BatchSlotMeter;
  private inFlight: { readonly ms: number; readonly atMs: number } | null = null;
  private readonly model: PassCostModel;

  /** `attentionShare`: attention per chunk pair ÷ recompute per chunk where the node knows it (PassCostOptions). */
  constructor(maxBatch: number, attentionShare?: number) {
    this.slots = new BatchSlotMeter(maxBatch);
    this.model = new PassCostModel({
      prior: {
        recompute: DEFAULT_ROUTING_COSTS.recomputeMsPerChunk,
        host: DEFAULT_ROUTING_COSTS.loadMsPerChunk.host,
        ssd: DEFAULT_ROUTING_COSTS.loadMsPerChunk.ssd,
        peer: DEFAULT_ROUTING_COSTS.peerMsPerChunk,
      },
      ...(attentionShare !== undefined ? { attentionShare } : {}),
    });
  }

  /** Prefill passes measured so far. */
  get passes(): number {
    return this.model.observed;
  }

  pass(p: PrefillPass): void {
    this.model.observe(p);
  }

  /** A prefill pass of `seqs` starts at `nowMs`: what it is expected to take, priced with the costs measured so far. */
  passStarted(seqs: readonly StartingSeq[], nowMs: number): void {
    this.inFlight = { ms: this.prefillMs(seqs), atMs: nowMs };
  }

  private prefillMs(seqs: readonly StartingSeq[]): number {
    const c = this.model.costs();
    const costs = {
      recomputeMsPerChunk: c.recomputeMsPerChunk ?? DEFAULT_ROUTING_COSTS.recomputeMsPerChunk,
      attentionMsPerChunkPair: c.attentionMsPerChunkPair,
    };
    let ms = 0;
    for (const s of seqs)
      ms += recomputeSpanMs(costs, Math.min(s.cachedTokens, s.promptTokens) / CHUNK_TOKENS, s.promptTokens / CHUNK_TOKENS);
    return ms;
  }

  /** The pass in flight ended (measured or not). */
  passEnded(): void {
    this.inFlight = null;
  }

  /**
   * Prefill work the node has in hand at `nowMs`, ms, for the heartbeat: what is left of the pass
   * in flight, plus what its waiting sequences still have to prefill (`queued`, kv-core
   * queuedPrefill), priced with the costs measured so far.
   */
  prefillBusyMs(nowMs: number, queued: readonly StartingSeq[] = []): number {
    const inFlight = this.inFlight ? Math.max(0, this.inFlight.ms - (nowMs - this.inFlight.atMs)) : 0;
    return queued.length === 0 ? inFlight : inFlight + this.prefillMs(queued);
  }

  /** A sequence left the batch after `residencyMs` in it (its first token to its last). */
  sequenceFinished(residencyMs: number): void {
    this.slots.finished(residencyMs);
  }

  costs(): MeasuredCosts {
    const slotMs = this.slots.slotMs();
    return { ...this.model.costs(), ...(slotMs !== undefined ? { slotMs } : {}) };
  }
}
