// Private NATS and Postgres servers for `npm start` and the integration tests.
// Plain ESM with JSDoc types so both run it without a build step.
export { freePort } from './free-port.mjs';
export { startNats } from './nats.server.mjs';
export { startPostgres } from './postgres.server.mjs';
export { redactUrl } from './redact-url.mjs';
export { inboxPrefix, natsUsers, natsUsersFromEnv, nodeUser, rolePermissions } from './nats-auth.mjs';
export { hasOpenssl, makePrivateCa } from './tls.mjs';
export { makeLocalSecrets } from './local-secrets.mjs';
