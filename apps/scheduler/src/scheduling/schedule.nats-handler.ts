import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { ErrorCode, isMnemoError } from '@mnemo/kv-core';
import { decodeMessage, encodeMessage, InferenceRequestSchema, QueueGroups, ScheduleReplySchema, Subjects, type InferenceRequest } from '@mnemo/proto';
import { JsonLogger, ServiceMetrics } from '@mnemo/service-kit';
import { NatsEndpoints } from '../nats/nats.endpoints.js';
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
    this.endpoints.listen(Subjects.SCHEDULE, (msg) => this.handle(msg.data), QueueGroups.SCHEDULER);
  }

  private async handle(data: Uint8Array): Promise<Uint8Array> {
    try {
      const nodeId = await this.metrics.time('schedule', async () => {
        let request: InferenceRequest;
        try {
          request = decodeMessage(InferenceRequestSchema, data);
        } catch (e) {
          throw Object.assign(new Error(`malformed InferenceRequest: ${(e as Error).message}`), { code: ErrorCode.InvalidRequest });
        }
        return this.useCase.execute(new ScheduleInferenceCommand(request));
      });
      return encodeMessage(ScheduleReplySchema, { result: { case: 'nodeId', value: nodeId } });
    } catch (e) {
      return encodeMessage(ScheduleReplySchema, { result: { case: 'error', value: this.toErrorReply(e) } });
    }
  }

  private toErrorReply(e: unknown): { code: string; message: string } {
    if (isMnemoError(e)) return { code: e.code, message: e.message };
    if ((e as { code?: unknown })?.code === ErrorCode.InvalidRequest) return { code: ErrorCode.InvalidRequest, message: (e as Error).message };
    const errorId = randomUUID();
    this.logger.emit('error', 'schedule failed', { errorId, err: e instanceof Error ? e : String(e) });
    return { code: ErrorCode.Internal, message: `internal error (id ${errorId})` };
  }
}
