import { Inject, Injectable } from '@nestjs/common';
import { ErrorCode, MnemoError, type ReservationBook } from '@mnemo/kv-core';
import { CLOCK, type Clock } from '@mnemo/service-kit';
import { NODE_PREFETCHER, type NodePrefetcher } from '../sessions/node-prefetch.port.js';
import { RESERVATION_BOOK } from '../sessions/session-table.provider.js';
import { SchedulerMetrics } from '../shared/scheduler.metrics.js';
import type { InvalidateAdvisoryCommand } from './invalidate-advisory.command.js';

/**
 * Frees the reservation and tells its node (ForgetRequest) that what it prefetched for it is
 * first to purge. Unknown id → not_found; an id that already expired → not_found saying so.
 */
@Injectable()
export class InvalidateAdvisoryUseCase {
  constructor(
    @Inject(RESERVATION_BOOK) private readonly book: ReservationBook,
    @Inject(NODE_PREFETCHER) private readonly nodes: NodePrefetcher,
    @Inject(SchedulerMetrics) private readonly metrics: SchedulerMetrics,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  execute({ tenant, advisoryId }: InvalidateAdvisoryCommand): true {
    if (!advisoryId || advisoryId.length > 128)
      throw new MnemoError(ErrorCode.InvalidRequest, 'advisory_id must be 1–128 characters', { param: 'advisory_id' });
    const found = this.book.lookup(tenant, advisoryId, this.clock.unixMs());
    this.metrics.invalidations.inc({ outcome: found.kind });
    if (found.kind === 'unknown')
      throw new MnemoError(ErrorCode.NotFound, `unknown advisory ${JSON.stringify(advisoryId)}`, { param: 'advisory_id' });
    if (found.kind === 'expired') {
      throw new MnemoError(
        ErrorCode.NotFound,
        `advisory ${JSON.stringify(advisoryId)} expired at ${new Date(found.expiredAtMs).toISOString()}`,
        { param: 'advisory_id' },
      );
    }
    const r = found.reservation;
    this.book.release(r.id);
    // The client need not wait for the node: demoting prefetched data is the node's background work.
    void this.nodes
      .forget(r.nodeId, { advisoryId: r.id, sessionId: r.sessionId })
      .then((o) => this.metrics.nodeForgets.inc({ outcome: o.kind }));
    return true;
  }
}
