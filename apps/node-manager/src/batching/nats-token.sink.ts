import { Inject, Injectable } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { encodeMessage, TokenEventSchema } from '@mnemo/proto';
import { NATS_CONNECTION } from '@mnemo/service-kit';
import type { Sequence } from '../shared/sequence.js';
import type { TokenEventInit, TokenSink } from './token.sink.port.js';
import { NODE_CONFIG, type NodeManagerConfig } from '../config/node-manager.config.js';

/**
 * Publishes TokenEvents straight to the gateway's inbox (the scheduler is not on the token
 * path), stamped with the dispatch attempt and this node's id so the gateway can tell this
 * attempt from another one sharing the inbox. A silently cancelled sequence publishes nothing.
 */
@Injectable()
export class NatsTokenSink implements TokenSink {
  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(NODE_CONFIG) private readonly config: NodeManagerConfig,
  ) {}

  emit(seq: Sequence, event: TokenEventInit): void {
    if (seq.silent) return;
    // After a crash-stop the connection is gone; the gateway's own timeout covers the request.
    if (this.nc.isClosed()) return;
    this.nc.publish(
      seq.request.replySubject,
      encodeMessage(TokenEventSchema, { ...event, attempt: seq.request.attempt, nodeId: this.config.NODE_ID }),
    );
  }
}
