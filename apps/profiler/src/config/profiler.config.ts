import { commonSchema, opsSchema, loadConfig, type ConfigOf, type Schema } from '@mnemo/service-kit';

/** The profiler's environment (docs/DEVELOPMENT.md); validated once at boot. */
export const profilerSchema = {
  ...commonSchema,
  ...opsSchema,
  DATABASE_URL: {
    type: 'url',
    doc: 'Postgres holding models, pairs and profiles, e.g. postgres://user@127.0.0.1:5432/mnemo',
    required: true,
    protocols: ['postgres', 'postgresql'],
    // URLs carry passwords.
    secret: true,
  },
  METRICS_PORT: { type: 'int', doc: 'HTTP port of /metrics, /healthz, /readyz (0 = any free port)', default: 9404, min: 0, max: 65535 },
} as const satisfies Schema;

export type ProfilerConfig = ConfigOf<typeof profilerSchema>;

/** Injection token of the validated configuration. */
export const PROFILER_CONFIG = Symbol('PROFILER_CONFIG');

export function loadProfilerConfig(env: Readonly<Record<string, string | undefined>>): ProfilerConfig {
  return loadConfig(profilerSchema, env);
}
