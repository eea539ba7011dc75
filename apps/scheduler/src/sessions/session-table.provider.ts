import { SessionTable } from '@mnemo/kv-core';
import { SCHEDULER_CONFIG, type SchedulerConfig } from '../config/scheduler.config.js';

/** Injection token of the scheduler's SessionTable (kv-core). */
export const SESSION_TABLE = Symbol('SESSION_TABLE');

export const sessionTableProvider = {
  provide: SESSION_TABLE,
  inject: [SCHEDULER_CONFIG],
  useFactory: (config: SchedulerConfig) => new SessionTable(config.SCHEDULER_MAX_SESSIONS!),
};
