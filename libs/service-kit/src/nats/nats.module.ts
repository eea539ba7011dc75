import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { NATS_CONNECTION } from './nats.connection.js';
import { NatsEndpoints } from './nats.endpoints.js';
import { NatsResponders } from './nats.responders.js';

/**
 * The endpoints every feature registers its subjects on, and the orderly end of the
 * connection. The app connects before Nest starts (so a failed boot can close it) and provides
 * NATS_CONNECTION and JsonLogger globally; on shutdown the handlers in flight answer first,
 * then the drain flushes what they published (last TokenEvents, a goodbye heartbeat).
 */
@Global()
@Module({
  providers: [NatsEndpoints, NatsResponders],
  exports: [NatsEndpoints, NatsResponders],
})
export class NatsModule implements OnApplicationShutdown {
  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(NatsEndpoints) private readonly endpoints: NatsEndpoints,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.endpoints.closeAll();
    if (!this.nc.isClosed()) await this.nc.drain();
  }
}
