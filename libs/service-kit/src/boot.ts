import type { NatsConnection } from '@nats-io/transport-node';
import { ConfigError } from './config.loader.js';
import { JsonLogger, type LogLevel } from './json.logger.js';
import { ServiceMetrics } from './metrics.registry.js';
import { connectServiceNats, type NatsEnv } from './nats/nats.connection.js';

/** What a service's Nest application is built over. */
export interface ServiceBasics {
  readonly logger: JsonLogger;
  readonly metrics: ServiceMetrics;
  readonly nats: NatsConnection;
}

/**
 * The first steps of a service's boot: its logger and metrics registry named `service`, its NATS
 * connection (listed as `service`, replies on the inboxes of `service`), then `create`, the Nest
 * application over them. A failed `create` closes the connection before the error propagates,
 * so a boot that fails leaves nothing open.
 */
export async function startService<A>(
  service: string,
  config: NatsEnv & { readonly LOG_LEVEL?: string },
  create: (basics: ServiceBasics) => Promise<A>,
): Promise<ServiceBasics & { readonly app: A }> {
  const logger = new JsonLogger(service, config.LOG_LEVEL as LogLevel);
  const metrics = new ServiceMetrics(service);
  const nats = await connectServiceNats(config, service, service);
  try {
    return { logger, metrics, nats, app: await create({ logger, metrics, nats }) };
  } catch (e) {
    await nats.close();
    throw e;
  }
}

/**
 * Runs a service's bootstrap; configuration problems are printed as one JSON line
 * listing all of them and the process exits non-zero. SIGINT/SIGTERM call `stop`
 * once (graceful: drain, finish or cancel in-flight work, close connections).
 */
export function bootOrExit(service: string, start: () => Promise<{ stop: () => Promise<void> }>): void {
  start().then(
    (handle) => {
      let stopping = false;
      const onSignal = (signal: string) => {
        if (stopping) return;
        stopping = true;
        log(service, 'info', `received ${signal}, shutting down`);
        const force = setTimeout(() => process.exit(1), 10_000);
        force.unref();
        handle.stop().then(
          () => process.exit(0),
          (e) => {
            log(service, 'error', 'shutdown failed', { err: String(e) });
            process.exit(1);
          },
        );
      };
      process.on('SIGINT', () => onSignal('SIGINT'));
      process.on('SIGTERM', () => onSignal('SIGTERM'));
    },
    (e) => {
      if (e instanceof ConfigError) log(service, 'error', 'invalid configuration', { problems: e.problems });
      else log(service, 'error', 'failed to start', { err: e instanceof Error ? e.stack : String(e) });
      process.exit(1);
    },
  );
}

function log(service: string, level: string, msg: string, fields: Record<string, unknown> = {}): void {
  process.stdout.write(JSON.stringify({ level, time: new Date().toISOString(), service, msg, ...fields }) + '\n');
}
