import { randomUUID } from 'node:crypto';
import { ReservationBook, SessionTable } from '@mnemo/kv-core';
import { SCHEDULER_CONFIG, type SchedulerConfig } from '../config/scheduler.config.js';

/** Injection token of the scheduler's SessionTable (kv-core). */
export const SESSION_TABLE = Symbol('SESSION_TABLE');
/** Injection token of the advisory ReservationBook (kv-core). */
export const RESERVATION_BOOK = Symbol('RESERVATION_BOOK');
/** Injection token of the advisory id source (randomness behind a port: tests pass a counter). */
export const ADVISORY_IDS = Symbol('ADVISORY_IDS');
export type AdvisoryIds = () => string;

export const sessionTableProvider = {
  provide: SESSION_TABLE,
  inject: [SCHEDULER_CONFIG],
  useFactory: (config: SchedulerConfig) => new SessionTable(config.SCHEDULER_MAX_SESSIONS!),
};

export const reservationBookProvider = {
  provide: RESERVATION_BOOK,
  inject: [SCHEDULER_CONFIG],
  useFactory: (config: SchedulerConfig) =>
    new ReservationBook(
      { perTenant: config.SCHEDULER_ADVISORIES_PER_TENANT!, total: config.SCHEDULER_ADVISORIES_MAX! },
      config.SCHEDULER_ADVISORY_OVERDUE_MS!,
    ),
};

export const advisoryIdsProvider = { provide: ADVISORY_IDS, useValue: (() => `adv-${randomUUID()}`) satisfies AdvisoryIds };
