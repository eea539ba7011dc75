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
  HTTP_PORT: { type: 'int', doc: 'port of the profiling REST API (/v1/profiler/…; 0 = any free port)', default: 8090, min: 0, max: 65535 },
  HTTP_HOST: { type: 'string', doc: 'bind address of the REST API (0.0.0.0 in containers)', default: '127.0.0.1' },
  PROFILER_JOB_POLL_MS: {
    type: 'int',
    doc: 'how often an idle profiler looks for queued or abandoned jobs',
    default: 2000,
    min: 10,
    max: 600000,
  },
  PROFILER_JOB_LEASE_MS: {
    type: 'int',
    doc: "a running job's claim, renewed after every pattern; a crashed profiler's job resumes after it lapses",
    default: 60000,
    min: 1000,
    max: 3600000,
  },
  PROFILER_MAX_PROMPTS: { type: 'int', doc: 'most prompts in one profiling dataset', default: 64, min: 1, max: 10000 },
  PROFILER_MAX_PROMPT_TOKENS: { type: 'int', doc: 'longest prompt of a profiling dataset, in tokens', default: 1024, min: 1, max: 131072 },
  PROFILER_MAX_CONTINUATION_TOKENS: {
    type: 'int',
    doc: 'longest generated continuation a job may compare over',
    default: 64,
    min: 1,
    max: 4096,
  },
} as const satisfies Schema;

export type ProfilerConfig = ConfigOf<typeof profilerSchema>;

/** Injection token of the validated configuration. */
export const PROFILER_CONFIG = Symbol('PROFILER_CONFIG');

export function loadProfilerConfig(env: Readonly<Record<string, string | undefined>>): ProfilerConfig {
  return loadConfig(profilerSchema, env);
}
