import { Inject, Injectable } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { encodeMessage, TokenEventSchema } from '@mnemo/proto';
import { NATS_CONNECTION } from '@mnemo/service-kit';
import type { TokenEventInit, TokenSink } from '../batching/token.sink.port.js';

/** Publishes TokenEvents straight to the gateway's inbox: the scheduler is not on the token path. */
@Injectable()
export class NatsTokenSink implements TokenSink {
  constructor(@Inject(NATS_CONNECTION) private readonly nc: NatsConnection) {}

  emit(replySubject: string, event: TokenEventInit): void {
    // After a crash-stop the connection is gone; the gateway's own timeout covers the request.
    if (!this.nc.isClosed()) this.nc.publish(replySubject, encodeMessage(TokenEventSchema, event));
  }
}
