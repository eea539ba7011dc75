import {
  AdvisoryReplySchema,
  AdvisoryRequestSchema,
  encodeMessage,
  InvalidateAdvisoryReplySchema,
  InvalidateAdvisoryRequestSchema,
  QueueGroups,
  Subjects,
} from '@mnemo/proto';
import { natsEntryPoints, resultOneof } from '@mnemo/service-kit';
import { AdviseCommand } from './advise.command.js';
import { AdviseUseCase } from './advise.use-case.js';
import { advisoryInfo } from './advisory.info.js';
import { InvalidateAdvisoryCommand } from './invalidate-advisory.command.js';
import { InvalidateAdvisoryUseCase } from './invalidate-advisory.use-case.js';

/** ADVISE / INVALIDATE (queue group `scheduler`) → the advisory use cases. */
export const AdvisoriesNatsHandler = natsEntryPoints(
  'AdvisoriesNatsHandler',
  [AdviseUseCase, InvalidateAdvisoryUseCase],
  (nats, advise, invalidate) => {
    nats.respond(Subjects.ADVISE, {
      operation: 'advise',
      request: AdvisoryRequestSchema,
      handle: (r) => advise.execute(new AdviseCommand(r.tenant, r.sessionId, r.model, r.expectedArrivalUnixMs, r.ordered, r.priority)),
      reply: (o) => encodeMessage(AdvisoryReplySchema, { result: resultOneof(o, 'advisory', advisoryInfo) }),
      queue: QueueGroups.SCHEDULER,
    });
    nats.respond(Subjects.INVALIDATE, {
      operation: 'invalidate',
      request: InvalidateAdvisoryRequestSchema,
      handle: (r) => invalidate.execute(new InvalidateAdvisoryCommand(r.tenant, r.advisoryId)),
      reply: (o) => encodeMessage(InvalidateAdvisoryReplySchema, { result: resultOneof(o, 'found', () => true) }),
      queue: QueueGroups.SCHEDULER,
    });
  },
);
