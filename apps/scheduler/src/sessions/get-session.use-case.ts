import { Inject, Injectable } from '@nestjs/common';
import { ErrorCode, MnemoError, type ReservationBook, type SessionRecord, type SessionTable, type Reservation } from '@mnemo/kv-core';
import { CLOCK, type Clock } from '@mnemo/service-kit';
import { validateSessionId, type SessionCommand } from './session.command.js';
import { RESERVATION_BOOK, SESSION_TABLE } from './session-table.provider.js';

export interface SessionView {
  readonly session: SessionRecord;
  readonly advisory?: Reservation;
}

/** What the scheduler knows of one session of the tenant; unknown → not_found. */
@Injectable()
export class GetSessionUseCase {
  constructor(
    @Inject(SESSION_TABLE) private readonly sessions: SessionTable,
    @Inject(RESERVATION_BOOK) private readonly book: ReservationBook,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  execute({ tenant, sessionId }: SessionCommand): SessionView {
    validateSessionId(sessionId);
    const session = this.sessions.get(tenant, sessionId);
    if (!session) throw new MnemoError(ErrorCode.NotFound, `unknown session ${JSON.stringify(sessionId)}`, { param: 'session_id' });
    const advisory = this.book.forSession(tenant, sessionId, this.clock.unixMs());
    return advisory ? { session, advisory } : { session };
  }
}
