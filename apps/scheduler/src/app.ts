import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { CLOCK, type Clock, listenOrCleanUp, NatsEndpoints, OpsServer, runOnce, startService } from '@mnemo/service-kit';
import { AppModule } from './app.module.js';
import { IndexerAccess } from './indexer/indexer.access.js';
import { IndexerHttpServer } from './indexer/indexer.http-server.js';
import { QueryIndexerUseCase } from './indexer/query-indexer.use-case.js';
import { loadSchedulerConfig } from './config/scheduler.config.js';
import { NodeRegistry } from './nodes/node.registry.js';
import { SchedulerMetrics } from './shared/scheduler.metrics.js';
import { RESERVATION_BOOK, SESSION_TABLE } from './sessions/session-table.provider.js';
import type { ReservationBook, SessionTable } from '@mnemo/kv-core';

export interface SchedulerHandle {
  /** Port of /metrics, /healthz, /readyz (useful with METRICS_PORT=0). */
  readonly metricsPort: number;
  /** Port of the KV indexer API (SCHEDULER_INDEXER=on), else undefined. */
  readonly indexerPort?: number;
  stop(): Promise<void>;
}

/**
 * Boots the scheduler: validates the environment (throws ConfigError listing every problem),
 * connects to NATS, keeps the node registry from heartbeats, answers SCHEDULE and MODELS_LIST in
 * the `scheduler` queue group (so replicas share the work), serves ops endpoints.
 */
export async function startScheduler(env: Readonly<Record<string, string | undefined>> = process.env): Promise<SchedulerHandle> {
  const config = loadSchedulerConfig(env);
  const { logger, metrics, app } = await startService('scheduler', config, ({ logger, metrics, nats }) =>
    NestFactory.createApplicationContext(AppModule.forRoot(config, logger, metrics, nats), { logger, abortOnError: false }),
  );
  const endpoints = app.get(NatsEndpoints);
  const registry = app.get(NodeRegistry);
  app.get(SchedulerMetrics).observeLiveNodes(() => registry.size);
  const book = app.get<ReservationBook>(RESERVATION_BOOK);
  const sessions = app.get<SessionTable>(SESSION_TABLE);
  const clock = app.get<Clock>(CLOCK);
  app.get(SchedulerMetrics).observeSessions(
    () => {
      book.sweep(clock.unixMs());
      return book.size;
    },
    () => sessions.size,
  );
  app.get(SchedulerMetrics).observeAdvisoryExpiries(() => {
    book.sweep(clock.unixMs());
    return book.expiredTotal;
  });
  const ops = new OpsServer(metrics, () => endpoints.listening);
  const indexer =
    config.SCHEDULER_INDEXER === 'on'
      ? new IndexerHttpServer(
          app.get(QueryIndexerUseCase),
          config.SCHEDULER_VLLM_TENANT!,
          new IndexerAccess(config.SCHEDULER_INDEXER_ADMIN_KEYS ?? [], config.MNEMO_API_KEYS ?? []),
        )
      : undefined;
  const indexerPort = indexer
    ? await listenOrCleanUp(indexer, config.SCHEDULER_INDEXER_PORT!, config.SCHEDULER_INDEXER_HOST!, () => app.close())
    : undefined;
  const metricsPort = await listenOrCleanUp(ops, config.METRICS_PORT!, config.METRICS_HOST!, async () => {
    await indexer?.close();
    await app.close();
  });
  logger.emit('info', 'scheduler ready', { metricsPort, indexerPort, nodeTimeoutMs: config.SCHEDULER_NODE_TIMEOUT_MS });
  return {
    metricsPort,
    ...(indexerPort !== undefined ? { indexerPort } : {}),
    stop: runOnce(async () => {
      await ops.close();
      await indexer?.close();
      // Shutdown hooks: stop the sweep, answer schedule requests in flight, drain NATS.
      await app.close();
      logger.emit('info', 'scheduler stopped');
    }),
  };
}
