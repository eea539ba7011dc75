import { Inject, Injectable } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config/gateway.config.js';
import { SchedulerClient } from '../nats/scheduler.client.js';

export interface SessionView {
  readonly session_id: string;
  readonly model: string;
  /** Node that ran the session's last request. */
  readonly node: string;
  readonly requests: number;
  /** Unix ms. */
  readonly last_used: number;
  readonly chunks: number;
  readonly advisory: { advisory_id: string; node: string; expires_at: number } | null;
}

export interface SessionDeletionView {
  readonly session_id: string;
  readonly deleted: true;
  readonly freed_chunks: number;
  readonly nodes_told: number;
}

/** GET and DELETE of a session, for the REST and gRPC doors alike. */
@Injectable()
export class SessionUseCase {
  constructor(
    @Inject(SchedulerClient) private readonly scheduler: SchedulerClient,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  async get(tenant: string, sessionId: string): Promise<SessionView> {
    const s = await this.scheduler.getSession(tenant, sessionId, this.timeoutMs);
    return {
      session_id: s.sessionId,
      model: s.model,
      node: s.nodeId,
      requests: s.requests,
      last_used: s.lastUsedUnixMs,
      chunks: s.chunks,
      advisory: s.advisory ? { advisory_id: s.advisory.advisoryId, node: s.advisory.nodeId, expires_at: s.advisory.expiresUnixMs } : null,
    };
  }

  async delete(tenant: string, sessionId: string): Promise<SessionDeletionView> {
    const d = await this.scheduler.deleteSession(tenant, sessionId, this.timeoutMs);
    return { session_id: sessionId, deleted: true, freed_chunks: d.freedChunks, nodes_told: d.nodesTold };
  }

  private get timeoutMs(): number {
    return Math.min(10_000, this.config.requestTimeoutMs);
  }
}
