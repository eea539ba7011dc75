import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import type { NatsConnection } from '@nats-io/transport-node';
import { JsonLogger, NATS_CONNECTION, NatsModule, ServiceMetrics } from '@mnemo/service-kit';
import { PROFILER_CONFIG, type ProfilerConfig } from './config/profiler.config.js';
import { DatabaseModule } from './database/database.module.js';
import { ModelsModule } from './models/models.module.js';
import { ModelPairsModule } from './pairs/model-pairs.module.js';
import { HttpErrorFilter } from './http/http-error.filter.js';
import { PlansModule } from './plans/plans.module.js';
import { ProfilingModule } from './profiling/profiling.module.js';

/** Root module: process-wide singletons (config, logger, metrics, the NATS connection made in app.ts) are shared globally. */
@Module({})
export class AppModule {
  static forRoot(config: ProfilerConfig, logger: JsonLogger, metrics: ServiceMetrics, nats: NatsConnection): DynamicModule {
    return {
      module: AppModule,
      global: true,
      imports: [DatabaseModule, NatsModule, ModelsModule, ModelPairsModule, ProfilingModule, PlansModule],
      providers: [
        { provide: PROFILER_CONFIG, useValue: config },
        { provide: JsonLogger, useValue: logger },
        { provide: ServiceMetrics, useValue: metrics },
        { provide: NATS_CONNECTION, useValue: nats },
        { provide: APP_FILTER, useClass: HttpErrorFilter },
      ],
      exports: [PROFILER_CONFIG, JsonLogger, ServiceMetrics, NATS_CONNECTION],
    };
  }
}
