import { Module, type DynamicModule } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { CLOCK, JsonLogger, NATS_CONNECTION, NatsModule, ServiceMetrics, systemClock, type Clock } from '@mnemo/service-kit';
import { SCHEDULER_CONFIG, type SchedulerConfig } from './config/scheduler.config.js';
import { AdvisoriesModule } from './advisories/advisories.module.js';
import { KvDirectoryModule } from './kv-directory/kv-directory.module.js';
import { InteropModule } from './interop/interop.module.js';
import { ModelsModule } from './models/models.module.js';
import { NodesModule } from './nodes/nodes.module.js';
import { SessionsModule } from './sessions/sessions.module.js';
import { SchedulingModule } from './scheduling/scheduling.module.js';
import { SchedulerMetrics } from './shared/scheduler.metrics.js';

/** Root module: process-wide singletons (config, logger, metrics, clock, the NATS connection) are made here and shared globally. */
@Module({})
export class AppModule {
  static forRoot(
    config: SchedulerConfig,
    logger: JsonLogger,
    metrics: ServiceMetrics,
    nats: NatsConnection,
    clock: Clock = systemClock,
  ): DynamicModule {
    return {
      module: AppModule,
      global: true,
      imports: [
        NatsModule,
        NodesModule,
        KvDirectoryModule,
        SchedulingModule,
        ModelsModule,
        SessionsModule,
        AdvisoriesModule,
        InteropModule,
      ],
      providers: [
        { provide: SCHEDULER_CONFIG, useValue: config },
        { provide: JsonLogger, useValue: logger },
        { provide: ServiceMetrics, useValue: metrics },
        { provide: SchedulerMetrics, useValue: new SchedulerMetrics(metrics) },
        { provide: CLOCK, useValue: clock },
        { provide: NATS_CONNECTION, useValue: nats },
      ],
      exports: [SCHEDULER_CONFIG, JsonLogger, ServiceMetrics, SchedulerMetrics, CLOCK, NATS_CONNECTION],
    };
  }
}
