import { Module } from '@nestjs/common';
import { NodesModule } from '../nodes/nodes.module.js';
import { DeleteSessionUseCase } from './delete-session.use-case.js';
import { GetSessionUseCase } from './get-session.use-case.js';
import { NatsNodePrefetcher } from './nats-node.prefetcher.js';
import { NODE_PREFETCHER } from './node-prefetch.port.js';
import {
  advisoryIdsProvider,
  ADVISORY_IDS,
  RESERVATION_BOOK,
  reservationBookProvider,
  SESSION_TABLE,
  sessionTableProvider,
} from './session-table.provider.js';
import { SessionsNatsHandler } from './sessions.nats-handler.js';

/**
 * Session state of the scheduler — each session's last node and chunk keys (sticky routing,
 * advisories) and the advisory reservations — plus SESSION_GET / SESSION_DELETE.
 */
@Module({
  imports: [NodesModule],
  providers: [
    sessionTableProvider,
    reservationBookProvider,
    advisoryIdsProvider,
    { provide: NODE_PREFETCHER, useClass: NatsNodePrefetcher },
    GetSessionUseCase,
    DeleteSessionUseCase,
    SessionsNatsHandler,
  ],
  exports: [SESSION_TABLE, RESERVATION_BOOK, ADVISORY_IDS, NODE_PREFETCHER],
})
export class SessionsModule {}
