import 'reflect-metadata';
import type { Server } from 'node:http';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter, type NestExpressApplication } from '@nestjs/platform-express';
import { connectNats, natsInboxPrefix, JsonLogger, listenOrCleanUp, OpsServer, listenJsonApi, ServiceMetrics } from '@mnemo/service-kit';
import { AdvisoriesGrpcController } from './advisories/advisories.grpc.controller.js';
import { AppModule } from './app.module.js';
import { InferGrpcController } from './completions/infer.grpc.controller.js';
import { loadGatewayConfig } from './config/gateway.config.js';
import { GatewayGrpcServer } from './grpc/gateway.grpc.server.js';
import { NatsReadiness } from './health/nats.readiness.js';

export interface GatewayHandle {
  readonly httpPort: number;
  readonly grpcPort: number;
  /** The ops port: /metrics, /healthz, /readyz (METRICS_PORT; useful with 0). */
  readonly metricsPort: number;
  /** Graceful: stops accepting, lets in-flight requests finish briefly, then closes NATS. */
  stop(): Promise<void>;
}

const SHUTDOWN_GRACE_MS = 5_000;

/** Nest's own info chatter (module init, one line per route) goes to debug; its warnings and errors stay. */
function frameworkLogger(logger: JsonLogger): JsonLogger {
  const quiet = Object.create(logger) as JsonLogger;
  quiet.log = (message: unknown, ...rest: unknown[]) => logger.debug(message, ...rest);
  return quiet;
}

/**
 * Boots the gateway from an environment map (process.env in main.ts; a literal map in the
 * in-process integration harness). Configuration problems throw ConfigError listing all of them.
 */
export async function startGateway(env: Record<string, string | undefined>): Promise<GatewayHandle> {
  const config = loadGatewayConfig(env);
  const logger = new JsonLogger('gateway', config.logLevel);
  const metrics = new ServiceMetrics('gateway');
  const nats = await connectNats(config.natsUrl, 'mnemo-gateway', config.natsCredentials, natsInboxPrefix('gateway'));
  let app: NestExpressApplication | undefined;
  let grpc: GatewayGrpcServer | undefined;
  try {
    app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot({ config, logger, metrics, nats }), new ExpressAdapter(), {
      // Our own JSON parser: any content type (curl -d sends form-urlencoded) and our size limit.
      bodyParser: false,
      logger: frameworkLogger(logger),
      abortOnError: false,
    });
    const httpPort = await listenJsonApi(app, config.port, config.host, config.maxBodyBytes);
    grpc = new GatewayGrpcServer(app.get(InferGrpcController), app.get(AdvisoriesGrpcController));
    const grpcPort = await grpc.listen(config.host, config.grpcPort);
    // Ready = NATS connected: without it no request can be scheduled.
    const readiness = app.get(NatsReadiness);
    const ops = new OpsServer(metrics, () => readiness.ready);
    const [a0, g0] = [app, grpc];
    const metricsPort = await listenOrCleanUp(ops, config.opsPort, config.opsHost, async () => {
      await g0.close(0);
      await a0.close();
    });
    logger.emit('info', 'gateway listening', { host: config.host, httpPort, grpcPort, metricsPort, auth: config.apiKeys.length > 0 });

    const [a, g] = [app, grpc];
    let stopping: Promise<void> | undefined;
    return {
      httpPort,
      grpcPort,
      metricsPort,
      stop: () =>
        (stopping ??= (async () => {
          // Streams still running after the grace period are cut; their runs then cancel on the nodes.
          const server = a.getHttpServer() as Server;
          const force = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
          await Promise.all([g.close(SHUTDOWN_GRACE_MS), a.close()]);
          clearTimeout(force);
          await ops.close();
          await nats.drain();
          logger.emit('info', 'gateway stopped');
        })()),
    };
  } catch (e) {
    await grpc?.close(0);
    await app?.close();
    await nats.close();
    throw e;
  }
}
