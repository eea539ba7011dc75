import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { decodeMessage, FrontierUpdatedSchema, Subjects } from '@mnemo/proto';
import { JsonLogger, NatsEndpoints } from '@mnemo/service-kit';
import { DERIVED_PAIRS, type DerivedPairsRegistry } from './derived-pairs.registry.js';

/** PROFILER_FRONTIER_UPDATED → the pairs registry (no queue group: every replica routes with it). */
@Injectable()
export class FrontierUpdatesNatsHandler implements OnApplicationBootstrap {
  constructor(
    @Inject(NatsEndpoints) private readonly endpoints: NatsEndpoints,
    @Inject(DERIVED_PAIRS) private readonly pairs: DerivedPairsRegistry,
    @Inject(JsonLogger) private readonly logger: JsonLogger,
  ) {}

  onApplicationBootstrap(): void {
    this.endpoints.listen(Subjects.PROFILER_FRONTIER_UPDATED, (msg) => {
      try {
        const u = decodeMessage(FrontierUpdatedSchema, msg.data);
        this.pairs.frontierUpdated(
          u.base,
          u.derived,
          u.frontier.flatMap((p) => (p.pattern ? [{ pattern: { r1: p.pattern.r1, u1: p.pattern.u1, r2: p.pattern.r2 } }] : [])),
        );
      } catch (e) {
        this.logger.emit('warn', 'malformed FrontierUpdated ignored', { err: String(e) });
      }
    });
  }
}
