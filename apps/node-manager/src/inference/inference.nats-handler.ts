import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { ErrorCode, isMnemoError } from '@mnemo/kv-core';
import { CancelRequestSchema, decodeMessage, encodeMessage, InferenceRequestSchema, nodeCancelSubject, nodeInferSubject, ScheduleReplySchema } from '@mnemo/proto';
import { JsonLogger, ServiceMetrics } from '@mnemo/service-kit';
import { NODE_CONFIG, type NodeManagerConfig } from '../config/node-manager.config.js';
import { NatsEndpoints } from '../nats/nats.endpoints.js';
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
    this.endpoints.listen(this.inferSubject, (msg) => this.onInfer(msg.data));
    this.endpoints.listen(nodeCancelSubject(this.config.NODE_ID), (msg) => {
      try {
        const req = decodeMessage(CancelRequestSchema, msg.data);
        this.cancel.execute(new CancelInferenceCommand(req.requestId, req.reason));
      } catch (e) {
        this.logger.emit('warn', 'malformed cancel ignored', { err: String(e) });
      }
    });
  }

  private onInfer(data: Uint8Array): Uint8Array {
    try {
      let request;
      try {
        request = decodeMessage(InferenceRequestSchema, data);
      } catch (e) {
        throw Object.assign(new Error(`malformed InferenceRequest: ${(e as Error).message}`), { code: ErrorCode.InvalidRequest });
      }
      const nodeId = this.admit.execute(new AdmitInferenceCommand(request));
      return encodeMessage(ScheduleReplySchema, { result: { case: 'nodeId', value: nodeId } });
    } catch (e) {
      const error = this.toErrorReply(e);
      this.metrics.requests.inc({ operation: 'admit', outcome: error.code });
      return encodeMessage(ScheduleReplySchema, { result: { case: 'error', value: error } });
    }
  }

  private toErrorReply(e: unknown): { code: string; message: string } {
    if (isMnemoError(e)) return { code: e.code, message: e.message };
    if ((e as { code?: unknown })?.code === ErrorCode.InvalidRequest) return { code: ErrorCode.InvalidRequest, message: (e as Error).message };
    const errorId = randomUUID();
    this.logger.emit('error', 'admission failed', { errorId, err: e instanceof Error ? e : String(e) });
    return { code: ErrorCode.Internal, message: `internal error (id ${errorId})` };
  }
}
