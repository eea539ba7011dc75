import { Inject, Injectable } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  CancelRequestSchema,
  decodeMessage,
  encodeMessage,
  FlowControlSchema,
  nodeCancelSubject,
  nodeFlowSubject,
  TokenizerChunkReplySchema,
  TokenizerChunkRequestSchema,
  tokenizerSubject,
} from '@mnemo/proto';
import { NATS_CONNECTION } from '@mnemo/service-kit';
import { fromReply, natsRequest } from './nats.request.js';

/** Identifies one attempt of one request on one node. */
export interface AttemptRef {
  readonly nodeId: string;
  readonly requestId: string;
  readonly attempt: number;
}

/**
 * The gateway's messages to nodes (libs/proto/src/subjects.ts): cancel and flow control for the
 * node running a request (fire-and-forget: a lost cancel is caught by the request deadline on the
 * node, a lost resume by the gateway's stall timeout), and tokenizer bundles from any node.
 */
@Injectable()
export class NodeClient {
  constructor(@Inject(NATS_CONNECTION) private readonly nc: NatsConnection) {}

  /** `silent`: the node ends the attempt without a final event (someone else streams into the inbox). */
  cancel(to: AttemptRef, reason: string, silent = false): void {
    if (this.nc.isClosed()) return;
    this.nc.publish(
      nodeCancelSubject(to.nodeId),
      encodeMessage(CancelRequestSchema, { requestId: to.requestId, attempt: to.attempt, reason, silent }),
    );
  }

  /** Pause (the client reads slowly) or resume one attempt. */
  flow(to: AttemptRef, pause: boolean): void {
    if (this.nc.isClosed()) return;
    this.nc.publish(nodeFlowSubject(to.nodeId), encodeMessage(FlowControlSchema, { requestId: to.requestId, attempt: to.attempt, pause }));
  }

  /** One slice of the tokenizer bundle with this hash, from whichever node holds it. */
  async tokenizerChunk(sha256: string, offset: number, timeoutMs: number): Promise<{ totalBytes: number; data: Uint8Array }> {
    const msg = await natsRequest(
      this.nc,
      tokenizerSubject(sha256),
      encodeMessage(TokenizerChunkRequestSchema, { offset }),
      timeoutMs,
      'node with this tokenizer',
    );
    const reply = decodeMessage(TokenizerChunkReplySchema, msg);
    if (reply.error && reply.error.code !== '') throw fromReply(reply.error);
    return { totalBytes: reply.totalBytes, data: reply.data };
  }
}
