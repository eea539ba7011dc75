import { connect, type ConnectionOptions, type NatsConnection } from '@nats-io/transport-node';

/** Injection token for the service's one NATS connection. */
export const NATS_CONNECTION = Symbol('NATS_CONNECTION');

/** NATS credentials from configuration (NATS_USER / NATS_PASSWORD, NATS_TLS_CA). */
export interface NatsCredentials {
  readonly user?: string;
  readonly password?: string;
  /** PEM file of the CA that signed the server's certificate: the connection then requires TLS and verifies the server. */
  readonly tlsCa?: string;
}

/**
 * Where a service reads its request replies (and the gateway its token streams): `_INBOX_<role>`,
 * a prefix of its own, so that least-privilege NATS users (docs/security.md) can let each read
 * only its own inboxes. `role` is scheduler, gateway, profiler, or `node.<id>`.
 */
export function natsInboxPrefix(role: string): string {
  return `_INBOX_${role}`;
}

/**
 * Server and credentials for the NATS client. The client takes no credentials from a URL, so a
 * `nats://user:password@host:port` URL (the form a Kubernetes Secret builds) is split here;
 * NATS_USER / NATS_PASSWORD, when set, win over the URL's.
 */
export function natsConnectOptions(url: string, creds: NatsCredentials = {}): Pick<ConnectionOptions, 'servers' | 'user' | 'pass'> {
  const u = new URL(url);
  const user = creds.user || decodeURIComponent(u.username);
  const pass = creds.user ? (creds.password ?? '') : creds.password || decodeURIComponent(u.password);
  u.username = '';
  u.password = '';
  const servers = `${u.protocol}//${u.host}`;
  return user ? { servers, user, pass } : { servers };
}

/**
 * Connects with unlimited reconnects: a NATS restart must not take a service down.
 * The first connect still fails fast so a wrong URL (or wrong credentials) is reported at boot.
 */
export async function connectNats(url: string, name: string, creds: NatsCredentials = {}, inboxPrefix?: string): Promise<NatsConnection> {
  return connect({
    ...natsConnectOptions(url, creds),
    ...(creds.tlsCa ? { tls: { caFile: creds.tlsCa } } : {}),
    ...(inboxPrefix ? { inboxPrefix } : {}),
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    timeout: 5000,
  });
}

/** The NATS variables of every service's environment schema (validated: NATS_URL is set). */
export interface NatsEnv {
  readonly NATS_URL?: string;
  readonly NATS_USER?: string;
  readonly NATS_PASSWORD?: string;
  readonly NATS_TLS_CA?: string;
}

/** {@link connectNats} from a service's environment: `name` as the server lists the client, replies on inboxes of `role`. */
export function connectServiceNats(config: NatsEnv, name: string, role: string): Promise<NatsConnection> {
  return connectNats(
    config.NATS_URL!,
    name,
    { user: config.NATS_USER, password: config.NATS_PASSWORD, tlsCa: config.NATS_TLS_CA },
    natsInboxPrefix(role),
  );
}
