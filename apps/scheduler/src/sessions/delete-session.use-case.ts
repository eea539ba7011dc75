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
 * (ForgetRequest with the session id) so what was prefetched for it is freed there — chunks
 * shared with other sessions are the nodes' to keep. The nodes are asked in parallel and their
 * counts summed; one that does not answer within the prefetch timeout counts as freeing nothing
 * (it still forgets). Unknown → not_found.
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

  async execute({ tenant, sessionId }: SessionCommand): Promise<SessionDeletion> {
    validateSessionId(sessionId);
    const reservation = this.book.forSession(tenant, sessionId, this.clock.unixMs());
    const session = this.sessions.delete(tenant, sessionId);
    if (!session && !reservation)
      throw new MnemoError(ErrorCode.NotFound, `unknown session ${JSON.stringify(sessionId)}`, { param: 'session_id' });
    if (reservation) this.book.release(reservation.id);
    const live = this.registry.all();
    const outcomes = await Promise.all(live.map((n) => this.nodes.forget(n.nodeId, { sessionId, advisoryId: reservation?.id ?? '' })));
    for (const o of outcomes) this.metrics.nodeForgets.inc({ outcome: o.kind });
    const freedChunks = outcomes.reduce((n, o) => n + (o.kind === 'queued' ? o.chunks : 0), 0);
    this.logger.emit('info', 'session deleted', { sessionId, nodes: live.length, freedChunks });
    return { found: true, freedChunks, nodesTold: live.length };
  }
}
