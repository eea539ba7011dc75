import { encodeMessage, QueueGroups, Subjects, WhyReplySchema, WhyRequestSchema } from '@mnemo/proto';
import { natsEntryPoints, type ReplyOutcome } from '@mnemo/service-kit';
import { WhyUseCase, type WhyOutcome } from './why.use-case.js';

/**
 * WHY, in the `scheduler` queue group: one replica answers, and since every replica keeps every
 * routing record (WhyRecordShare) the answer is the same whichever. An id nobody routed, or one
 * whose record aged out, is answered not_found at once (no fan-out, no wait for a timeout).
 */
export const WhyNatsHandler = natsEntryPoints('WhyNatsHandler', [WhyUseCase], (nats, useCase) => {
  nats.respond(Subjects.WHY, {
    operation: 'why',
    request: WhyRequestSchema,
    handle: (r) => useCase.execute(r),
    reply: (o) => encodeMessage(WhyReplySchema, { result: whyResult(o) }),
    timed: false,
    queue: QueueGroups.SCHEDULER,
  });
});

function whyResult(o: ReplyOutcome<WhyOutcome>) {
  if ('error' in o) return { case: 'error', value: o.error } as const;
  if (o.ok.kind === 'not_found') return { case: 'error', value: { code: 'not_found', message: 'no such request' } } as const;
  return { case: 'explanation', value: o.ok.explanation } as const;
}
