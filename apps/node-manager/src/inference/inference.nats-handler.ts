import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { CancelRequestSchema, encodeMessage, InferenceRequestSchema, nodeCancelSubject, nodeInferSubject, ScheduleReplySchema } from '@mnemo/proto';
import { decodeRequest, JsonLogger, NatsEndpoints, protoResponder, ServiceMetrics } from '@mnemo/service-kit';
import { NODE_CONFIG, type NodeManagerConfig } from '../config/node-manager.config.js';
import { AdmitInferenceCommand } from './admit-inference.command.js';
import { AdmitInferenceUseCase } from './admit-inference.use-case.js';
import { CancelInferenceCommand } from './cancel-inference.command.js';
import { CancelInferenceUseCase } from './cancel-inference.use-case.js';

/**
 * nodeInfer(NODE_ID) → AdmitInferenceUseCase → ScheduleReply (node id, or error);
 * nodeCancel(NODE_ID) → CancelInferenceUseCase (no reply).
 */
@Injectable()
export class InferenceNatsHandler implements OnApplicationBootstrap {
  constructor(
    @Inject(NatsEndpoints) private readonly endpoints: NatsEndpoints,
    @Inject(AdmitInferenceUseCase) private readonly admit: AdmitInferenceUseCase,
    @Inject(CancelInferenceUseCase) private readonly cancel: CancelInferenceUseCase,
    @Inject(NODE_CONFIG) private readonly config: NodeManagerConfig,
    @Inject(ServiceMetrics) private readonly metrics: ServiceMetrics,
    @Inject(JsonLogger) private readonly logger: JsonLogger,
  ) {}

  get inferSubject(): string {
    return nodeInferSubject(this.config.NODE_ID);
  }

  onApplicationBootstrap(): void {
    const admit = protoResponder({
      operation: 'admit',
      request: InferenceRequestSchema,
      handle: (request) => this.admit.execute(new AdmitInferenceCommand(request)),
      reply: (o) => encodeMessage(ScheduleReplySchema, { result: 'ok' in o ? { case: 'nodeId', value: o.ok } : { case: 'error', value: o.error } }),
      logger: this.logger,
      metrics: this.metrics,
    });
    this.endpoints.listen(this.inferSubject, admit);
    this.endpoints.listen(nodeCancelSubject(this.config.NODE_ID), (msg) => {
      try {
        const req = decodeRequest(CancelRequestSchema, msg.data);
        this.cancel.execute(new CancelInferenceCommand(req.requestId, req.reason));
      } catch (e) {
        this.logger.emit('warn', 'malformed cancel ignored', { err: String(e) });
      }
    });
  }
}
