import { DataSource } from 'typeorm';
import { ModelEntity } from '../models/model.entity.js';
import { ModelPairEntity } from '../pairs/model-pair.entity.js';
import { PairFrontierEntity } from '../profiling/pair-frontier.entity.js';
import { PatternResultEntity } from '../profiling/pattern-result.entity.js';
import { ProfilingJobEntity } from '../profiling/profiling-job.entity.js';
import { ModelRegistry1732300000000 } from './migrations/1732300000000-model-registry.migration.js';
import { ProfilingJobs1732400000000 } from './migrations/1732400000000-profiling-jobs.migration.js';
import { PatternTaskLoss1764400000000 } from './migrations/1764400000000-pattern-task-loss.migration.js';

/** Injection token of the initialised, migrated DataSource. */
export const DATA_SOURCE = Symbol('DATA_SOURCE');

/** Every migration, oldest first. Add new ones at the end; never edit an applied one. */
export const migrations = [ModelRegistry1732300000000, ProfilingJobs1732400000000, PatternTaskLoss1764400000000];

// Arbitrary constant shared by every profiler replica: "the profiler's migration lock".
const MIGRATION_LOCK_KEY = 0x6d6e656d6f; // "mnemo"

export function createDataSource(url: string): DataSource {
  return new DataSource({
    type: 'postgres',
    url,
    entities: [ModelEntity, ModelPairEntity, ProfilingJobEntity, PatternResultEntity, PairFrontierEntity],
    migrations,
    migrationsTableName: 'profiler_migrations',
    synchronize: false,
    logging: false,
    // Postgres is never on the request path; a small pool is plenty.
    extra: { max: 5 },
  });
}

/**
 * Applies pending migrations. Replicas (or parallel test files) starting at once take a
 * session-level advisory lock first, so exactly one applies each migration and the others
 * then see it as done. Safe to call on every start: applied migrations are skipped.
 */
export async function migrate(ds: DataSource): Promise<string[]> {
  const lock = ds.createQueryRunner();
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    const applied = await ds.runMigrations({ transaction: 'each' });
    return applied.map((m) => m.name);
  } finally {
    await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    await lock.release();
  }
}
