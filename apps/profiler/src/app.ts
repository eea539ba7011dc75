import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter, type NestExpressApplication } from '@nestjs/platform-express';
import { listenJsonApi, listenOrCleanUp, NatsEndpoints, OpsServer, runOnce, startService } from '@mnemo/service-kit';
import { AppModule } from './app.module.js';
import { loadProfilerConfig } from './config/profiler.config.js';

export interface ProfilerHandle {
  /** Port of the profiling REST API (useful with HTTP_PORT=0). */
  readonly httpPort: number;
  /** Port of /metrics, /healthz, /readyz (useful with METRICS_PORT=0). */
  readonly metricsPort: number;
  stop(): Promise<void>;
}

/**
 * Boots the profiler: validates the environment, connects to Postgres and applies pending
 * migrations, connects to NATS, answers the PROFILER_* subjects, serves the profiling REST API
 * (HTTP_PORT) and ops endpoints (METRICS_PORT); profiling jobs run in the background.
 * Throws ConfigError on a bad environment.
 */
export async function startProfiler(env: Readonly<Record<string, string | undefined>> = process.env): Promise<ProfilerHandle> {
  const config = loadProfilerConfig(env);
  const { logger, metrics, app } = await startService('profiler', config, ({ logger, metrics, nats }) =>
    NestFactory.create<NestExpressApplication>(AppModule.forRoot(config, logger, metrics, nats), new ExpressAdapter(), {
      logger,
      abortOnError: false,
      bodyParser: false,
    }),
  );
  // JSONL datasets travel in the body.
  const httpPort = await listenJsonApi(app, config.HTTP_PORT!, config.HTTP_HOST!, '8mb').catch(async (e: unknown) => {
    await app.close();
    throw e;
  });
  const endpoints = app.get(NatsEndpoints);
  const ops = new OpsServer(metrics, () => endpoints.listening);
  const metricsPort = await listenOrCleanUp(ops, config.METRICS_PORT!, config.METRICS_HOST!, () => app.close());
  logger.emit('info', 'profiler ready', { metricsPort, httpPort });
  return {
    httpPort,
    metricsPort,
    stop: runOnce(async () => {
      await ops.close();
      // Shutdown hooks: answer in-flight requests, drain NATS, close the database pool.
      await app.close();
      logger.emit('info', 'profiler stopped');
    }),
  };
}
