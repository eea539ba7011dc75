import { setTimeout as sleep } from 'node:timers/promises';
import {
  CancelRequestSchema,
  encodeMessage,
  FlowControlSchema,
  InferenceRequestSchema,
  nodeCancelSubject,
  nodeFlowSubject,
  nodeInferSubject,
  ScheduleReplySchema,
} from '@mnemo/proto';
import { decodeRequest, endWithError, natsEntryPoints, natsTraceContext, resultOneof, tracerFor } from '@mnemo/service-kit';
import { trace } from '@opentelemetry/api';
import { NODE_CONFIG, type NodeManagerConfig } from '../config/node-manager.config.js';
import { AdmitInferenceCommand } from './admit-inference.command.js';
import { AdmitInferenceUseCase } from './admit-inference.use-case.js';
import { CancelInferenceCommand } from './cancel-inference.command.js';
import { CancelInferenceUseCase } from './cancel-inference.use-case.js';
import { FlowControlCommand } from './flow-control.command.js';
import { FlowControlUseCase } from './flow-control.use-case.js';
import { NodeLifecycle } from '../shared/node.lifecycle.js';

/**
 * nodeInfer(NODE_ID) → AdmitInferenceUseCase → ScheduleReply (node id and attempt, or error);
 * nodeCancel(NODE_ID) → CancelInferenceUseCase and nodeFlow(NODE_ID) → FlowControlUseCase
 * (fire-and-forget: no reply; a malformed one is logged and dropped).
 */
export const InferenceNatsHandler = natsEntryPoints(
  'InferenceNatsHandler',
  [AdmitInferenceUseCase, CancelInferenceUseCase, FlowControlUseCase, NODE_CONFIG, NodeLifecycle],
  (nats, admit, cancel, flow, config: NodeManagerConfig, lifecycle) => {
    const replyDelayMs = config.NODE_ADMIT_REPLY_DELAY_MS!;
    nats.respond(nodeInferSubject(config.NODE_ID), {
      operation: 'admit',
      request: InferenceRequestSchema,
      handle: async (request, msg) => {
        const parent = natsTraceContext(msg);
        const span = tracerFor('node-manager').startSpan(
          'node.admit',
          {
            attributes: {
              'mnemo.request_id': request.requestId,
              'mnemo.node_id': config.NODE_ID,
              'mnemo.attempt': request.attempt,
              'mnemo.prompt_tokens': request.tokens.length,
            },
          },
          parent,
        );
        try {
          const nodeId = admit.execute(new AdmitInferenceCommand(request, trace.setSpan(parent, span)));
          if (replyDelayMs > 0) await sleep(replyDelayMs);
          span.end();
          return { nodeId, attempt: request.attempt, bootId: lifecycle.bootId };
        } catch (e) {
          endWithError(span, e);
          throw e;
        }
      },
      reply: (o) =>
        encodeMessage(ScheduleReplySchema, {
          result: resultOneof(o, 'nodeId', (ok) => ok.nodeId),
          ...('ok' in o ? { attempt: o.ok.attempt, bootId: o.ok.bootId } : {}),
        }),
    });
    nats.consume(
      nodeCancelSubject(config.NODE_ID),
      'cancel',
      (data) => decodeRequest(CancelRequestSchema, data),
      (c) => cancel.execute(new CancelInferenceCommand(c.requestId, c.reason, c.attempt, c.silent)),
    );
    nats.consume(
      nodeFlowSubject(config.NODE_ID),
      'flow control',
      (data) => decodeRequest(FlowControlSchema, data),
      (f) => flow.execute(new FlowControlCommand(f.requestId, f.attempt, f.pause)),
    );
  },
);
