import { Inject, Injectable } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { decodeMessage, encodeMessage, NodeKvRecordSchema, NodeWhyRequestSchema, nodeWhySubject, type NodeKvRecord } from '@mnemo/proto';
import { NATS_CONNECTION } from '@mnemo/service-kit';
import type { NodeWhyClient } from './why.ports.js';

const NODE_WHY_TIMEOUT_MS = 2000;

@Injectable()
export class NatsNodeWhyClient implements NodeWhyClient {
  constructor(@Inject(NATS_CONNECTION) private readonly nc: NatsConnection) {}

  async ask(nodeId: string, requestId: string, chunkKeys: readonly string[]): Promise<NodeKvRecord | null> {
    try {
      const msg = await this.nc.request(
        nodeWhySubject(nodeId),
        encodeMessage(NodeWhyRequestSchema, { requestId, chunkKeys: [...chunkKeys] }),
        { timeout: NODE_WHY_TIMEOUT_MS },
      );
      return decodeMessage(NodeKvRecordSchema, msg.data);
    } catch {
      return null; // gone, or too slow: the explanation says the node's record was not had
    }
  }
}
