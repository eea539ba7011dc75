import { commonSchema, opsSchema, loadConfig, type ConfigOf, type Schema } from '@mnemo/service-kit';

/** The scheduler's environment (docs/DEVELOPMENT.md); validated once at boot, every problem listed. */
export const schedulerSchema = {
  ...commonSchema,
  ...opsSchema,
  METRICS_PORT: { type: 'int', doc: 'HTTP port of /metrics, /healthz, /readyz (0 = any free port)', default: 9402, min: 0, max: 65535 },
  SCHEDULER_NODE_TIMEOUT_MS: { type: 'int', doc: 'a node is dropped after this long without a heartbeat', default: 3000, min: 100 },
  SCHEDULER_DISPATCH_TIMEOUT_MS: {
    type: 'int',
    doc: 'how long a node may take to admit a dispatched request before the next node is tried',
    default: 2000,
    min: 50,
  },
  SCHEDULER_KV_DIRECTORY_MAX_HOLDINGS: {
    type: 'int',
    doc: 'bound of the KV directory in (chunk key, node) pairs; the least recently used keys are forgotten past it (~200 B each)',
    default: 1_000_000,
    min: 1,
  },
} as const satisfies Schema;

export type SchedulerConfig = ConfigOf<typeof schedulerSchema>;

/** Injection token of the validated configuration. */
export const SCHEDULER_CONFIG = Symbol('SCHEDULER_CONFIG');

export function loadSchedulerConfig(env: Readonly<Record<string, string | undefined>>): SchedulerConfig {
  return loadConfig(schedulerSchema, env);
}
