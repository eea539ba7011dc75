import { Module, type DynamicModule } from '@nestjs/common';
import { JsonLogger, ServiceMetrics } from '@mnemo/service-kit';
import { PROFILER_CONFIG, type ProfilerConfig } from './config/profiler.config.js';
import { DatabaseModule } from './database/database.module.js';
import { ModelsModule } from './models/models.module.js';
import { NatsModule } from './nats/nats.module.js';
import { ModelPairsModule } from './pairs/model-pairs.module.js';

/** Root module: process-wide singletons (config, logger, metrics) are made here and shared globally. */
@Module({})
export class AppModule {
  static forRoot(config: ProfilerConfig, logger: JsonLogger, metrics: ServiceMetrics): DynamicModule {
    return {
      module: AppModule,
      global: true,
      imports: [DatabaseModule, NatsModule, ModelsModule, ModelPairsModule],
      providers: [
        { provide: PROFILER_CONFIG, useValue: config },
        { provide: JsonLogger, useValue: logger },
        { provide: ServiceMetrics, useValue: metrics },
      ],
      exports: [PROFILER_CONFIG, JsonLogger, ServiceMetrics],
    };
  }
}
