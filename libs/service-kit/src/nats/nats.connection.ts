import { connect, type NatsConnection } from '@nats-io/transport-node';

/** Injection token for the service's one NATS connection. */
export const NATS_CONNECTION = Symbol('NATS_CONNECTION');

/**
 * Connects with unlimited reconnects: a NATS restart must not take a service down.
 * The first connect still fails fast so a wrong URL is reported at boot.
 */
export async function connectNats(url: string, name: string): Promise<NatsConnection> {
  return connect({ servers: url, name, maxReconnectAttempts: -1, reconnectTimeWait: 250, timeout: 5000 });
}
