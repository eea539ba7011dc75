import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { connectNats, JsonLogger, listenOrCleanUp, NatsEndpoints, OpsServer, runOnce, ServiceMetrics, type LogLevel } from '@mnemo/service-kit';
import { AppModule } from './app.module.js';
import { loadProfilerConfig } from './config/profiler.config.js';

export interface ProfilerHandle {
  /** Port of /metrics, /healthz, /readyz (useful with METRICS_PORT=0). */
  readonly metricsPort: number;
  stop(): Promise<void>;
}

/**
 * Boots the profiler: validates the environment, connects to Postgres and applies pending
 * migrations, connects to NATS, answers the PROFILER_* subjects, serves ops endpoints.
 * Throws ConfigError on a bad environment.
 */
export async function startProfiler(env: Readonly<Record<string, string | undefined>> = process.env): Promise<ProfilerHandle> {
  const config = loadProfilerConfig(env);
  const logger = new JsonLogger('profiler', config.LOG_LEVEL as LogLevel);
  const metrics = new ServiceMetrics('profiler');
  const nats = await connectNats(config.NATS_URL!, 'profiler');
  const app = await NestFactory.createApplicationContext(AppModule.forRoot(config, logger, metrics, nats), { logger, abortOnError: false }).catch(
    async (e: unknown) => {
      await nats.close();
      throw e;
    },
  );
  const endpoints = app.get(NatsEndpoints);
  const ops = new OpsServer(metrics, () => endpoints.listening);
  const metricsPort = await listenOrCleanUp(ops, config.METRICS_PORT!, config.METRICS_HOST!, () => app.close());
  logger.emit('info', 'profiler ready', { metricsPort });
  return {
    metricsPort,
    stop: runOnce(async () => {
      await ops.close();
      // Shutdown hooks: answer in-flight requests, drain NATS, close the database pool.
      await app.close();
      logger.emit('info', 'profiler stopped');
    }),
  };
}
