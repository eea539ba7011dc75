import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { encodeMessage, InferenceRequestSchema, QueueGroups, ScheduleReplySchema, Subjects } from '@mnemo/proto';
import { NatsResponders, natsTraceContext, resultOneof } from '@mnemo/service-kit';
import { ScheduleInferenceCommand } from './schedule-inference.command.js';
import { ScheduleInferenceUseCase } from './schedule-inference.use-case.js';

/** SCHEDULE (queue group `scheduler`: one replica per request) → ScheduleInferenceUseCase → ScheduleReply. */
@Injectable()
export class ScheduleNatsHandler implements OnApplicationBootstrap {
  constructor(
    @Inject(NatsResponders) private readonly nats: NatsResponders,
    @Inject(ScheduleInferenceUseCase) private readonly useCase: ScheduleInferenceUseCase,
  ) {}

  onApplicationBootstrap(): void {
    this.nats.respond(Subjects.SCHEDULE, {
      operation: 'schedule',
      request: InferenceRequestSchema,
      handle: (request, msg) => this.useCase.execute(new ScheduleInferenceCommand(request, natsTraceContext(msg))),
      reply: (o) =>
        encodeMessage(ScheduleReplySchema, {
          result: resultOneof(o, 'nodeId', (ok) => ok.nodeId),
          ...('ok' in o ? { attempt: o.ok.attempt, bootId: o.ok.bootId } : {}),
        }),
      queue: QueueGroups.SCHEDULER,
    });
  }
}
