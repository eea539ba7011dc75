export { SessionTable, type SessionRecord } from './session.table.js';
export {
  ReservationBook,
  type Reservation,
  type ReservationLimits,
  type ReserveRefusal,
  type ReservationLookup,
} from './reservation.book.js';
export { SessionTailTracker, type SessionTail, type TailChunkEvent } from './session-tail.tracker.js';
export {
  ADVISORY_VERDICTS,
  judgeAdvisoryArrival,
  judgeReservationEnd,
  reservationPrefetchAfter,
  type AdvisoryOutcome,
  type AdvisoryOutcomeReason,
  type AdvisoryVerdict,
  type ReservationEnd,
} from './advisory.outcome.js';
