import { Inject, Injectable } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { CancelRequestSchema, encodeMessage, FlowControlSchema, nodeCancelSubject, nodeFlowSubject } from '@mnemo/proto';
import { NATS_CONNECTION } from '@mnemo/service-kit';

/** Identifies one attempt of one request on one node. */
export interface AttemptRef {
  readonly nodeId: string;
  readonly requestId: string;
  readonly attempt: number;
}

/**
 * The gateway's fire-and-forget messages to the node running a request (libs/proto/src/subjects.ts):
 * cancel and flow control. A lost cancel is caught by the request deadline on the node; a lost
 * resume by the gateway's stall timeout.
 */
@Injectable()
export class NodeClient {
  constructor(@Inject(NATS_CONNECTION) private readonly nc: NatsConnection) {}

  /** `silent`: the node ends the attempt without a final event (someone else streams into the inbox). */
  cancel(to: AttemptRef, reason: string, silent = false): void {
    if (this.nc.isClosed()) return;
    this.nc.publish(nodeCancelSubject(to.nodeId), encodeMessage(CancelRequestSchema, { requestId: to.requestId, attempt: to.attempt, reason, silent }));
  }

  /** Pause (the client reads slowly) or resume one attempt. */
  flow(to: AttemptRef, pause: boolean): void {
    if (this.nc.isClosed()) return;
    this.nc.publish(nodeFlowSubject(to.nodeId), encodeMessage(FlowControlSchema, { requestId: to.requestId, attempt: to.attempt, pause }));
  }
}
