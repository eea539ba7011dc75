import { Inject, Injectable } from '@nestjs/common';
import { ErrorCode, MnemoError, type ReservationBook, type SessionTable } from '@mnemo/kv-core';
import { CLOCK, JsonLogger, type Clock } from '@mnemo/service-kit';
import { NodeRegistry } from '../nodes/node.registry.js';
import { SchedulerMetrics } from '../shared/scheduler.metrics.js';
import { NODE_PREFETCHER, type NodePrefetcher } from './node-prefetch.port.js';
import { validateSessionId, type SessionCommand } from './session.command.js';
import { RESERVATION_BOOK, SESSION_TABLE } from './session-table.provider.js';

export interface SessionDeletion {
  readonly found: boolean;
  readonly freedChunks: number;
  readonly nodesTold: number;
}

/**
 * Forgets a session: its routing state and reservation here, and every live node is told
 * (ForgetRequest with the session id) so prefetched or cached data of it is demoted or freed
 * there — chunks shared with other sessions are the nodes' to keep. Unknown → not_found.
 */
@Injectable()
export class DeleteSessionUseCase {
  constructor(
    @Inject(SESSION_TABLE) private readonly sessions: SessionTable,
    @Inject(RESERVATION_BOOK) private readonly book: ReservationBook,
    @Inject(NODE_PREFETCHER) private readonly nodes: NodePrefetcher,
    @Inject(NodeRegistry) private readonly registry: NodeRegistry,
    @Inject(SchedulerMetrics) private readonly metrics: SchedulerMetrics,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(JsonLogger) private readonly logger: JsonLogger,
  ) {}

  execute({ tenant, sessionId }: SessionCommand): SessionDeletion {
    validateSessionId(sessionId);
    const reservation = this.book.forSession(tenant, sessionId, this.clock.unixMs());
    const session = this.sessions.delete(tenant, sessionId);
    if (!session && !reservation) throw new MnemoError(ErrorCode.NotFound, `unknown session ${JSON.stringify(sessionId)}`, { param: 'session_id' });
    if (reservation) this.book.release(reservation.id);
    const live = this.registry.all();
    // Told, not awaited: freeing is the nodes' background work (and a node without a handler answers nothing useful).
    for (const n of live) void this.nodes.forget(n.nodeId, { sessionId, advisoryId: reservation?.id ?? '' }).then((o) => this.metrics.nodeForgets.inc({ outcome: o.kind }));
    this.logger.emit('info', 'session deleted', { sessionId, nodes: live.length });
    return { found: true, freedChunks: 0, nodesTold: live.length };
  }
}
