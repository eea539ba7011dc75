import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { decodeMessage, FrontierUpdatedSchema, Subjects } from '@mnemo/proto';
import { NatsResponders } from '@mnemo/service-kit';
import { DERIVED_PAIRS, type DerivedPairsRegistry } from './derived-pairs.registry.js';

/** PROFILER_FRONTIER_UPDATED → the pairs registry (no queue group: every replica routes with it). */
@Injectable()
export class FrontierUpdatesNatsHandler implements OnApplicationBootstrap {
  constructor(
    @Inject(NatsResponders) private readonly nats: NatsResponders,
    @Inject(DERIVED_PAIRS) private readonly pairs: DerivedPairsRegistry,
  ) {}

  onApplicationBootstrap(): void {
    this.nats.consume(
      Subjects.PROFILER_FRONTIER_UPDATED,
      'FrontierUpdated',
      (data) => decodeMessage(FrontierUpdatedSchema, data),
      (u) =>
        this.pairs.frontierUpdated(
          u.base,
          u.derived,
          u.frontier.flatMap((p) => (p.pattern ? [{ pattern: { r1: p.pattern.r1, u1: p.pattern.u1, r2: p.pattern.r2 } }] : [])),
        ),
    );
  }
}
