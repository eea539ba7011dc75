import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import type { NatsConnection } from '@nats-io/transport-node';
import { JsonLogger, NATS_CONNECTION, ServiceMetrics } from '@mnemo/service-kit';
import { AdvisoriesModule } from './advisories/advisories.module.js';
import { ApiKeyAuthenticator } from './auth/api-key.authenticator.js';
import { ApiKeyGuard } from './auth/api-key.guard.js';
import { CompletionsModule } from './completions/completions.module.js';
import { GATEWAY_CONFIG, type GatewayConfig } from './config/gateway.config.js';
import { ErrorReporter } from './errors/error.reporter.js';
import { OpenAiExceptionFilter } from './errors/openai-exception.filter.js';
import { ModelsModule } from './models/models.module.js';
import { NodeClient } from './nats/node.client.js';
import { NodeDownListener } from './nats/node-down.listener.js';
import { SchedulerClient } from './nats/scheduler.client.js';
import { NatsReadiness } from './health/nats.readiness.js';
import { ProfilerModule } from './profiler/profiler.module.js';
import { RequestsModule } from './requests/requests.module.js';
import { AdminKeyCheck } from './auth/admin-key.check.js';

export interface GatewayDeps {
  readonly config: GatewayConfig;
  readonly logger: JsonLogger;
  readonly metrics: ServiceMetrics;
  readonly nats: NatsConnection;
}

/** Process-wide pieces every feature may inject; built in app.ts, so tests and main share one wiring. */
@Module({})
class CoreModule {
  static forRoot(deps: GatewayDeps): DynamicModule {
    const providers = [
      { provide: GATEWAY_CONFIG, useValue: deps.config },
      { provide: JsonLogger, useValue: deps.logger },
      { provide: ServiceMetrics, useValue: deps.metrics },
      { provide: NATS_CONNECTION, useValue: deps.nats },
      { provide: NatsReadiness, useValue: new NatsReadiness(deps.nats) },
      { provide: ApiKeyAuthenticator, useValue: new ApiKeyAuthenticator(deps.config.apiKeys) },
      { provide: AdminKeyCheck, useValue: new AdminKeyCheck(deps.config.adminKeys) },
      ApiKeyGuard,
      ErrorReporter,
      SchedulerClient,
      NodeClient,
      NodeDownListener,
    ];
    return { module: CoreModule, global: true, providers, exports: providers.map((p) => ('provide' in p ? p.provide : p)) };
  }
}

@Module({})
export class AppModule {
  static forRoot(deps: GatewayDeps): DynamicModule {
    return {
      module: AppModule,
      imports: [CoreModule.forRoot(deps), CompletionsModule, ModelsModule, AdvisoriesModule, ProfilerModule, RequestsModule],
      providers: [{ provide: APP_FILTER, useClass: OpenAiExceptionFilter }],
    };
  }
}
