import { Inject, Injectable } from '@nestjs/common';
import { Counter } from 'prom-client';
import { ErrorCode, MnemoError, TenantRateLimiter } from '@mnemo/kv-core';
import { ServiceMetrics } from '@mnemo/service-kit';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config/gateway.config.js';
import { SchedulerClient } from '../nats/scheduler.client.js';
import type { AdviseCommand } from './advise.command.js';

/** What a client gets back for an advisory. */
export interface AdvisoryView {
  readonly advisory_id: string;
  readonly node: string;
  /** Unix ms after which the reservation is gone. */
  readonly expires_at: number;
}

/**
 * Advise and invalidate, for the REST and gRPC doors alike: the scheduler decides, we forward.
 * Advisories are rate-limited per tenant here, before they cost anything: each one makes the
 * scheduler reserve a node and nodes pull KV, so one tenant's flood would cost everyone.
 */
@Injectable()
export class AdviseUseCase {
  private readonly limiter: TenantRateLimiter;
  private readonly limited: Counter;

  constructor(
    @Inject(SchedulerClient) private readonly scheduler: SchedulerClient,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(ServiceMetrics) metrics: ServiceMetrics,
  ) {
    this.limiter = new TenantRateLimiter(config.advisoryLimit);
    this.limited = new Counter({
      name: 'mnemo_gateway_advisories_rate_limited_total',
      help: 'Advisories refused with 429 because their tenant exceeded GATEWAY_ADVISORY_RATE / GATEWAY_ADVISORY_BURST',
      registers: [metrics.registry],
    });
  }

  async execute(cmd: AdviseCommand): Promise<AdvisoryView> {
    const d = this.limiter.take(cmd.tenant, Date.now());
    if (!d.ok) {
      this.limited.inc();
      const { ratePerSec, burst } = this.config.advisoryLimit;
      throw new MnemoError(
        ErrorCode.Overloaded,
        `advisory rate limit exceeded for this tenant (${ratePerSec} per second, bursts of ${burst}): retry in ${d.retryAfterMs} ms`,
        { retryAfterMs: d.retryAfterMs },
      );
    }
    const a = await this.scheduler.advise(
      {
        tenant: cmd.tenant,
        sessionId: cmd.sessionId,
        model: cmd.model,
        expectedArrivalUnixMs: cmd.expectedArrivalUnixMs,
        ordered: cmd.ordered,
        priority: cmd.priority,
      },
      this.timeoutMs,
    );
    return { advisory_id: a.advisoryId, node: a.nodeId, expires_at: a.expiresUnixMs };
  }

  async invalidate(tenant: string, advisoryId: string): Promise<{ advisory_id: string; deleted: true }> {
    await this.scheduler.invalidate(tenant, advisoryId, this.timeoutMs);
    return { advisory_id: advisoryId, deleted: true };
  }

  private get timeoutMs(): number {
    return Math.min(10_000, this.config.requestTimeoutMs);
  }
}
