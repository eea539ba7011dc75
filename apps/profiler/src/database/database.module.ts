import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { JsonLogger } from '@mnemo/service-kit';
import { PROFILER_CONFIG, type ProfilerConfig } from '../config/profiler.config.js';
import { ModelEntity } from '../models/model.entity.js';
import { ModelPairEntity } from '../pairs/model-pair.entity.js';
import { PairFrontierEntity } from '../profiling/pair-frontier.entity.js';
import { PatternResultEntity } from '../profiling/pattern-result.entity.js';
import { ProfilingJobEntity } from '../profiling/profiling-job.entity.js';
import { createDataSource, DATA_SOURCE, migrate } from './data-source.js';

/** Repositories are injected by token so use cases depend on one table each, not on TypeORM set-up. */
export const MODEL_REPOSITORY = Symbol('MODEL_REPOSITORY');
export const MODEL_PAIR_REPOSITORY = Symbol('MODEL_PAIR_REPOSITORY');
export const PROFILING_JOB_REPOSITORY = Symbol('PROFILING_JOB_REPOSITORY');
export const PATTERN_RESULT_REPOSITORY = Symbol('PATTERN_RESULT_REPOSITORY');
export const PAIR_FRONTIER_REPOSITORY = Symbol('PAIR_FRONTIER_REPOSITORY');

/** Connects to DATABASE_URL and applies pending migrations before anything else starts. */
@Global()
@Module({
  providers: [
    {
      provide: DATA_SOURCE,
      inject: [PROFILER_CONFIG, JsonLogger],
      useFactory: async (config: ProfilerConfig, logger: JsonLogger): Promise<DataSource> => {
        const ds = createDataSource(config.DATABASE_URL!);
        await ds.initialize();
        try {
          const applied = await migrate(ds);
          logger.emit('info', 'database ready', { migrationsApplied: applied });
        } catch (e) {
          await ds.destroy();
          throw e;
        }
        return ds;
      },
    },
    { provide: MODEL_REPOSITORY, inject: [DATA_SOURCE], useFactory: (ds: DataSource) => ds.getRepository(ModelEntity) },
    { provide: MODEL_PAIR_REPOSITORY, inject: [DATA_SOURCE], useFactory: (ds: DataSource) => ds.getRepository(ModelPairEntity) },
    { provide: PROFILING_JOB_REPOSITORY, inject: [DATA_SOURCE], useFactory: (ds: DataSource) => ds.getRepository(ProfilingJobEntity) },
    { provide: PATTERN_RESULT_REPOSITORY, inject: [DATA_SOURCE], useFactory: (ds: DataSource) => ds.getRepository(PatternResultEntity) },
    { provide: PAIR_FRONTIER_REPOSITORY, inject: [DATA_SOURCE], useFactory: (ds: DataSource) => ds.getRepository(PairFrontierEntity) },
  ],
  exports: [
    DATA_SOURCE,
    MODEL_REPOSITORY,
    MODEL_PAIR_REPOSITORY,
    PROFILING_JOB_REPOSITORY,
    PATTERN_RESULT_REPOSITORY,
    PAIR_FRONTIER_REPOSITORY,
  ],
})
export class DatabaseModule implements OnApplicationShutdown {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  async onApplicationShutdown(): Promise<void> {
    if (this.ds.isInitialized) await this.ds.destroy();
  }
}
