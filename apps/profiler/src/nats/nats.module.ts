import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { connectNats, NATS_CONNECTION } from '@mnemo/service-kit';
import { PROFILER_CONFIG, type ProfilerConfig } from '../config/profiler.config.js';
import { ProfilerResponder } from './profiler.responder.js';

/** The profiler's one NATS connection and the responder every feature registers its subjects on. */
@Global()
@Module({
  providers: [
    {
      provide: NATS_CONNECTION,
      inject: [PROFILER_CONFIG],
      useFactory: (config: ProfilerConfig) => connectNats(config.NATS_URL!, 'profiler'),
    },
    ProfilerResponder,
  ],
  exports: [NATS_CONNECTION, ProfilerResponder],
})
export class NatsModule implements OnApplicationShutdown {
  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(ProfilerResponder) private readonly responder: ProfilerResponder,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    // Replies still being computed need the connection: answer them, then drain.
    await this.responder.close();
    if (!this.nc.isClosed()) await this.nc.drain();
  }
}
