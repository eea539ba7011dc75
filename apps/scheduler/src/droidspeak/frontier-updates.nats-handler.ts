import { decodeMessage, FrontierUpdatedSchema, Subjects } from '@mnemo/proto';
import { natsEntryPoints } from '@mnemo/service-kit';
import { DERIVED_PAIRS, type DerivedPairsRegistry } from './derived-pairs.registry.js';

/** PROFILER_FRONTIER_UPDATED → the pairs registry (no queue group: every replica routes with it). */
export const FrontierUpdatesNatsHandler = natsEntryPoints(
  'FrontierUpdatesNatsHandler',
  [DERIVED_PAIRS],
  (nats, pairs: DerivedPairsRegistry) => {
    nats.consume(
      Subjects.PROFILER_FRONTIER_UPDATED,
      'FrontierUpdated',
      (data) => decodeMessage(FrontierUpdatedSchema, data),
      (u) =>
        pairs.frontierUpdated(
          u.base,
          u.derived,
          u.frontier.flatMap((p) => (p.pattern ? [{ pattern: { r1: p.pattern.r1, u1: p.pattern.u1, r2: p.pattern.r2 } }] : [])),
        ),
    );
  },
);
