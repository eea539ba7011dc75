import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { encodeMessage, InferenceRequestSchema, QueueGroups, ScheduleReplySchema, Subjects } from '@mnemo/proto';
import { JsonLogger, NatsEndpoints, natsTraceContext, protoResponder, ServiceMetrics } from '@mnemo/service-kit';
import { ScheduleInferenceCommand } from './schedule-inference.command.js';
import { ScheduleInferenceUseCase } from './schedule-inference.use-case.js';

/** SCHEDULE (queue group `scheduler`: one replica per request) → ScheduleInferenceUseCase → ScheduleReply. */
@Injectable()
export class ScheduleNatsHandler implements OnApplicationBootstrap {
  constructor(
    @Inject(NatsEndpoints) private readonly endpoints: NatsEndpoints,
    @Inject(ScheduleInferenceUseCase) private readonly useCase: ScheduleInferenceUseCase,
    @Inject(ServiceMetrics) private readonly metrics: ServiceMetrics,
    @Inject(JsonLogger) private readonly logger: JsonLogger,
  ) {}

  onApplicationBootstrap(): void {
    const handler = protoResponder({
      operation: 'schedule',
      request: InferenceRequestSchema,
      handle: (request, msg) => this.useCase.execute(new ScheduleInferenceCommand(request, natsTraceContext(msg))),
      reply: (o) =>
        encodeMessage(
          ScheduleReplySchema,
          'ok' in o
            ? { result: { case: 'nodeId', value: o.ok.nodeId }, attempt: o.ok.attempt, bootId: o.ok.bootId }
            : { result: { case: 'error', value: o.error } },
        ),
      logger: this.logger,
      metrics: this.metrics,
    });
    this.endpoints.listen(Subjects.SCHEDULE, handler, QueueGroups.SCHEDULER);
  }
}
