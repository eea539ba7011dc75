import { Inject, Injectable } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  CancelRequestSchema,
  decodeMessage,
  encodeMessage,
  InferenceRequestSchema,
  nodeCancelSubject,
  nodeInferSubject,
  ScheduleReplySchema,
  type InferenceRequest,
} from '@mnemo/proto';
import { NATS_CONNECTION, natsTraceHeaders, requestNats } from '@mnemo/service-kit';
import { ROOT_CONTEXT, type Context } from '@opentelemetry/api';
import { SCHEDULER_CONFIG, type SchedulerConfig } from '../config/scheduler.config.js';
import type { DispatchOutcome, NodeDispatcher } from './node-dispatcher.port.js';

/**
 * NATS request to the node's infer subject; the request (with the gateway's inbox) is forwarded
 * unchanged. Never throws: every way a dispatch can go wrong is an outcome, so the caller takes
 * back the load it counted for it on every path.
 */
@Injectable()
export class NatsNodeDispatcher implements NodeDispatcher {
  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(SCHEDULER_CONFIG) private readonly config: SchedulerConfig,
  ) {}

  async dispatch(nodeId: string, request: InferenceRequest, trace: Context = ROOT_CONTEXT): Promise<DispatchOutcome> {
    const subject = nodeInferSubject(nodeId);
    const payload = encodeMessage(InferenceRequestSchema, request);
    const sent = await requestNats(this.nc, subject, payload, this.config.SCHEDULER_DISPATCH_TIMEOUT_MS!, natsTraceHeaders(trace));
    if (sent.kind === 'no_responders' || sent.kind === 'timeout') return { kind: 'unreachable', reason: sent.kind };
    // Connection closed, draining or reconnecting: the scheduler must still take back what it reserved.
    if (sent.kind === 'failed') return { kind: 'failed', reason: sent.error instanceof Error ? sent.error.message : String(sent.error) };
    let reply;
    try {
      reply = decodeMessage(ScheduleReplySchema, sent.data);
    } catch (e) {
      return { kind: 'failed', reason: `unreadable reply from node ${nodeId}: ${e instanceof Error ? e.message : String(e)}` };
    }
    switch (reply.result.case) {
      case 'nodeId':
        return { kind: 'admitted', bootId: reply.bootId };
      case 'error':
        return { kind: 'refused', code: reply.result.value.code, message: reply.result.value.message };
      default:
        return { kind: 'refused', code: 'internal', message: `node ${nodeId} sent an empty reply` };
    }
  }

  abandon(nodeId: string, requestId: string, attempt: number): void {
    if (this.nc.isClosed()) return;
    this.nc.publish(
      nodeCancelSubject(nodeId),
      encodeMessage(CancelRequestSchema, { requestId, attempt, reason: 'dispatch_timeout', silent: true }),
    );
  }
}
