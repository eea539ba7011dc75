import { encodeMessage, InferenceRequestSchema, QueueGroups, ScheduleReplySchema, Subjects } from '@mnemo/proto';
import { natsEntryPoints, natsTraceContext, resultOneof } from '@mnemo/service-kit';
import { ScheduleInferenceCommand } from './schedule-inference.command.js';
import { ScheduleInferenceUseCase } from './schedule-inference.use-case.js';

/** SCHEDULE (queue group `scheduler`: one replica per request) → ScheduleInferenceUseCase → ScheduleReply. */
export const ScheduleNatsHandler = natsEntryPoints('ScheduleNatsHandler', [ScheduleInferenceUseCase], (nats, useCase) => {
  nats.respond(Subjects.SCHEDULE, {
    operation: 'schedule',
    request: InferenceRequestSchema,
    handle: (request, msg) => useCase.execute(new ScheduleInferenceCommand(request, natsTraceContext(msg))),
    reply: (o) =>
      encodeMessage(ScheduleReplySchema, {
        result: resultOneof(o, 'nodeId', (ok) => ok.nodeId),
        ...('ok' in o ? { attempt: o.ok.attempt, bootId: o.ok.bootId } : {}),
      }),
    queue: QueueGroups.SCHEDULER,
  });
});
