import { BatchSlotMeter } from './batch-slot.meter.js';
import type { MeasuredCosts } from './node-load.js';
import { PassCostModel, type PrefillPass } from './pass-cost.model.js';
import { DEFAULT_ROUTING_COSTS } from './route.types.js';

/**
 * Everything a node measures of itself for routing, as its heartbeats report it: its costs per
 * chunk from its prefill passes (PassCostModel, pulled towards kv-core's defaults until passes
 * back them) and how often its full batch frees a slot (BatchSlotMeter). The live node and the
 * twin's nodes both keep one, so the scheduler prices either with the same figures.
 */
export class NodeCostMeters {
  private readonly slots: BatchSlotMeter;
  private readonly model = new PassCostModel({
    prior: {
      recompute: DEFAULT_ROUTING_COSTS.recomputeMsPerChunk,
      host: DEFAULT_ROUTING_COSTS.loadMsPerChunk.host,
      ssd: DEFAULT_ROUTING_COSTS.loadMsPerChunk.ssd,
      peer: DEFAULT_ROUTING_COSTS.peerMsPerChunk,
    },
  });

  constructor(maxBatch: number) {
    this.slots = new BatchSlotMeter(maxBatch);
  }

  /** Prefill passes measured so far. */
  get passes(): number {
    return this.model.observed;
  }

  pass(p: PrefillPass): void {
    this.model.observe(p);
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
