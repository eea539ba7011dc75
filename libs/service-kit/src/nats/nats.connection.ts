import { connect, type ConnectionOptions, type NatsConnection } from '@nats-io/transport-node';

/** Injection token for the service's one NATS connection. */
export const NATS_CONNECTION = Symbol('NATS_CONNECTION');

/** NATS credentials from configuration (NATS_USER / NATS_PASSWORD). */
export interface NatsCredentials {
  readonly user?: string;
  readonly password?: string;
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
export async function connectNats(url: string, name: string, creds: NatsCredentials = {}): Promise<NatsConnection> {
  return connect({ ...natsConnectOptions(url, creds), name, maxReconnectAttempts: -1, reconnectTimeWait: 250, timeout: 5000 });
}
