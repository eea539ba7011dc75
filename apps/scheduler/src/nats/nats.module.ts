import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { NATS_CONNECTION } from '@mnemo/service-kit';
import { NatsEndpoints } from './nats.endpoints.js';

/**
 * The endpoints every feature registers its subjects on, and the orderly end of the connection
 * (made in app.ts before Nest starts, so a failed boot can close it).
 */
@Global()
@Module({
  providers: [NatsEndpoints],
  exports: [NatsEndpoints],
})
export class NatsModule implements OnApplicationShutdown {
  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(NatsEndpoints) private readonly endpoints: NatsEndpoints,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    // In-flight schedule requests still need the connection to dispatch and reply: finish them, then drain.
    await this.endpoints.close();
    if (!this.nc.isClosed()) await this.nc.drain();
  }
}
