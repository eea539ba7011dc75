import { Inject, Injectable } from '@nestjs/common';
import { ErrorCode, MnemoError, type Reservation, type ReservationBook, type SessionTable } from '@mnemo/kv-core';
import { CLOCK, JsonLogger, type Clock } from '@mnemo/service-kit';
import { SCHEDULER_CONFIG, type SchedulerConfig } from '../config/scheduler.config.js';
import { NodeRegistry } from '../nodes/node.registry.js';
import { RoutePlanner } from '../scheduling/route.planner.js';
import { validateSessionId } from '../sessions/session.command.js';
import { NODE_PREFETCHER, type NodePrefetcher } from '../sessions/node-prefetch.port.js';
import { ADVISORY_IDS, RESERVATION_BOOK, SESSION_TABLE, type AdvisoryIds } from '../sessions/session-table.provider.js';
import { SchedulerMetrics } from '../shared/scheduler.metrics.js';
import type { AdviseCommand } from './advise.command.js';

/**
 * Symphony §3.3 advisory: a request of the session is coming. The node is chosen now — by the
 * configured policy over the session's last chunk keys (symphony: load and reservations, plus the
 * cost of moving the prefix vs recomputing it) — and reserved with a TTL; that node is then told
 * where the session's chunks live (PrefetchRequest) so it can pull them before the request.
 * The prefetch is fire-and-forget: a node without a prefetch handler (or a slow one) never
 * fails or delays the advisory. Unknown session → not_found; a tenant over its limit → overloaded (429).
 */
@Injectable()
export class AdviseUseCase {
  constructor(
    @Inject(SESSION_TABLE) private readonly sessions: SessionTable,
    @Inject(RESERVATION_BOOK) private readonly book: ReservationBook,
    @Inject(RoutePlanner) private readonly planner: RoutePlanner,
    @Inject(NodeRegistry) private readonly registry: NodeRegistry,
    @Inject(NODE_PREFETCHER) private readonly nodes: NodePrefetcher,
    @Inject(ADVISORY_IDS) private readonly ids: AdvisoryIds,
    @Inject(SCHEDULER_CONFIG) private readonly config: SchedulerConfig,
    @Inject(SchedulerMetrics) private readonly metrics: SchedulerMetrics,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(JsonLogger) private readonly logger: JsonLogger,
  ) {}

  execute(cmd: AdviseCommand): Reservation {
    try {
      const r = this.advise(cmd);
      this.metrics.advisories.inc({ outcome: 'reserved' });
      return r;
    } catch (e) {
      this.metrics.advisories.inc({ outcome: e instanceof MnemoError ? e.code : 'internal' });
      throw e;
    }
  }

  private advise(cmd: AdviseCommand): Reservation {
    validate(cmd);
    const session = this.sessions.get(cmd.tenant, cmd.sessionId);
    if (!session)
      throw new MnemoError(
        ErrorCode.NotFound,
        `unknown session ${JSON.stringify(cmd.sessionId)}: advisories are for sessions that sent a request`,
        { param: 'session_id' },
      );
    if (session.model !== cmd.model)
      throw new MnemoError(
        ErrorCode.InvalidRequest,
        `session ${JSON.stringify(cmd.sessionId)} uses model ${session.model}, not ${cmd.model}`,
        { param: 'model' },
      );
    const now = this.clock.unixMs();
    // The node (kv-core planAdvisory: the backlog as it will be at the expected arrival, the
    // session's partial chunk priced like a request's tail), and what it prefetches from whom.
    const choice = this.planner.advise(
      session,
      { tenant: cmd.tenant, sessionId: cmd.sessionId, model: cmd.model, expectedArrivalMs: cmd.expectedArrivalUnixMs },
      now,
      this.config.SCHEDULER_ADVISORY_MAX_AHEAD_MS!,
    );
    if (!choice)
      throw new MnemoError(
        this.registry.size === 0 ? ErrorCode.NoNodeAvailable : ErrorCode.ModelNotFound,
        `no live node serves model ${cmd.model}`,
      );
    const arrival = choice.arrivalMs;
    const reservation: Reservation = {
      id: this.ids(),
      tenant: cmd.tenant,
      sessionId: cmd.sessionId,
      model: cmd.model,
      nodeId: choice.nodeId,
      expectedAtMs: arrival,
      expiresAtMs: Math.round(arrival + this.config.SCHEDULER_ADVISORY_TTL_MS!),
      priority: cmd.priority,
    };
    const taken = this.book.reserve(reservation, now);
    if (!taken.ok) {
      const limit =
        taken.refusal === 'tenant_limit'
          ? `${this.config.SCHEDULER_ADVISORIES_PER_TENANT} live advisories per tenant`
          : `${this.config.SCHEDULER_ADVISORIES_MAX} live advisories`;
      throw new MnemoError(
        ErrorCode.Overloaded,
        `too many advisories (limit: ${limit}); invalidate unused ones or wait for them to expire`,
      );
    }
    if (taken.replaced && taken.replaced.nodeId !== reservation.nodeId)
      void this.forget(taken.replaced.nodeId, taken.replaced.id, cmd.sessionId);
    const sources = choice.sources.map((src) => ({
      nodeId: src.nodeId,
      grpcAddress: this.registry.get(src.nodeId)?.grpcAddress ?? '',
      chunkKeys: [...src.chunkKeys],
    }));
    void this.nodes
      .prefetch(choice.nodeId, {
        advisoryId: reservation.id,
        sessionId: cmd.sessionId,
        model: cmd.model,
        chunkKeys: [...choice.chunkKeys],
        sources,
        expiresAtMs: BigInt(reservation.expiresAtMs),
        priority: cmd.priority,
        ordered: cmd.ordered,
        expectedArrivalMs: BigInt(cmd.expectedArrivalUnixMs > 0 ? arrival : 0),
      })
      .then((o) => {
        this.metrics.prefetches.inc({ outcome: o.kind });
        if (o.kind === 'refused' || o.kind === 'timeout')
          this.logger.emit('warn', 'prefetch not accepted', { nodeId: choice.nodeId, advisoryId: reservation.id, outcome: o });
      });
    return reservation;
  }

  private async forget(nodeId: string, advisoryId: string, sessionId: string): Promise<void> {
    const o = await this.nodes.forget(nodeId, { advisoryId, sessionId });
    this.metrics.nodeForgets.inc({ outcome: o.kind });
  }
}

function validate(cmd: AdviseCommand): void {
  validateSessionId(cmd.sessionId);
  if (!cmd.model) throw new MnemoError(ErrorCode.InvalidRequest, 'model is required', { param: 'model' });
  if (!Number.isFinite(cmd.expectedArrivalUnixMs) || cmd.expectedArrivalUnixMs < 0) {
    throw new MnemoError(ErrorCode.InvalidRequest, 'expected_arrival must be a time in milliseconds since the epoch', {
      param: 'expected_arrival',
    });
  }
  if (!Number.isInteger(cmd.priority)) throw new MnemoError(ErrorCode.InvalidRequest, 'priority must be an integer', { param: 'priority' });
}
