import { Inject, Injectable } from '@nestjs/common';
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

/** Advise and invalidate, for the REST and gRPC doors alike: the scheduler decides, we forward. */
@Injectable()
export class AdviseUseCase {
  constructor(
    @Inject(SchedulerClient) private readonly scheduler: SchedulerClient,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  async execute(cmd: AdviseCommand): Promise<AdvisoryView> {
    const a = await this.scheduler.advise(
      { tenant: cmd.tenant, sessionId: cmd.sessionId, model: cmd.model, expectedArrivalUnixMs: cmd.expectedArrivalUnixMs, ordered: cmd.ordered, priority: cmd.priority },
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
