export * from './conversation.trace.js';
export * from './figures.js';
export * from './metrics.scrape.js';
export * from './plot.js';
export * from './sse.events.js';
export * from './swiftcache.settings.js';
export * from './trained.models.js';
export * from './house/house.map.js';
export * from './house/house.files.js';
// Private NATS and Postgres servers, least-privilege NATS users and TLS material (infra/, README.md).
export { freePort } from './infra/free-port.js';
export { busyShare, cpuSample, waitForQuiet, type CpuSample, type QuietOptions, type QuietResult } from './infra/quiet-machine.js';
export { redactUrl } from './infra/redact-url.js';
export type { RunningServer } from './infra/server.process.js';
export { startNats, type NatsServerOptions, type RunningNats } from './infra/nats.server.js';
export { startPostgres, type RunningPostgres } from './infra/postgres.server.js';
export { inboxPrefix, natsUsers, natsUsersFromEnv, nodeUser, rolePermissions, type EnvNatsUser, type NatsRole } from './infra/nats.auth.js';
export { hasOpenssl, makePrivateCa } from './infra/tls.ca.js';
export { makeLocalSecrets, type LocalSecrets } from './infra/local.secrets.js';
export { COMPOSE_NATS_CONF, COMPOSE_NATS_USERS, composeNatsConf, composeNatsEnv } from './infra/nats.compose.js';
export * from './supervisor/restart.policy.js';
export * from './supervisor/supervised.process.js';
export {
  DEFAULT_WORKLOAD,
  fitTail,
  normalQuantile,
  SHAREGPT_TAIL,
  sessionTokens,
  workload,
  workloadStats,
  type Session,
  type Tail,
  type Turn,
  type WorkloadOptions,
} from './workloads/multiround.workload.js';
export * from './results/targets.js';
export * from './results/report.js';
export * from './results/routing.check.js';
export {
  baseSessions,
  FASTSWITCH_WORKLOAD,
  PAPER_STATS,
  PAPER_WORKLOAD,
  paperSessions,
  paperWorkloadStats,
} from './workloads/paper.workload.js';
