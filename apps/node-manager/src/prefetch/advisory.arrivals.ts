import { Inject, Injectable } from '@nestjs/common';
import { judgeAdvisoryArrival, type AdvisoryVerdict } from '@mnemo/kv-core';
import { CLOCK, type Clock } from '@mnemo/service-kit';
import { CHUNK_STORE, type ChunkStore } from '../kv-store/chunk-store.port.js';
import { NodeMetrics } from '../shared/node.metrics.js';
import { AdvisoryRegistry } from './advisory.registry.js';

/**
 * Judges the advisories of a session whose request this node admitted (kv-core
 * judgeAdvisoryArrival): hit when every chunk they had the node pull is here, missed when some
 * did not land or were purged first. Only the node can say, at that moment, what its pools hold;
 * requests that went elsewhere and advisories that lapsed are the scheduler's to judge.
 */
@Injectable()
export class AdvisoryArrivals {
  constructor(
    @Inject(AdvisoryRegistry) private readonly advisories: AdvisoryRegistry,
    @Inject(CHUNK_STORE) private readonly store: ChunkStore,
    @Inject(NodeMetrics) private readonly metrics: NodeMetrics,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  arrived(sessionId: string, model: string): AdvisoryVerdict[] {
    return this.advisories.arrived(sessionId, model, this.clock.unixMs()).map((a) => {
      const v = judgeAdvisoryArrival(a.queued, Math.min(a.queued, this.store.advisoryChunksHeld(model, a.id)));
      this.metrics.advisoryOutcomes.inc({ outcome: v.outcome, reason: v.reason });
      return v;
    });
  }
}
