/**
 * What became of an advisory (Symphony §3.3, §3.6): the three figures an operator watches to
 * know whether advisories pay for the pulls and memory they cost.
 *
 * - `hit`: a request of the advised session arrived on the advised node and found there every
 *   chunk the advisory had it pull (`found`), or there was nothing to pull because the node held
 *   the prefix already (`held`).
 * - `missed`: the request arrived but its prefetched KV was not there: it ran on another node
 *   because the advised one was too busy or refused it (`moved`); or some (`partial`) or all
 *   (`absent`) of the chunks to pull had not landed or were purged for room before it came.
 * - `spurious`: the advisory lapsed without a request of its session (`expired`).
 *
 * An advisory its client withdrew (invalidated, replaced by a newer one for the session, or the
 * session deleted) is none of these — the client said so itself — and is not judged.
 *
 * Each advisory is judged once, by whichever service knows the fact: the node, for a request
 * that came to it (only it knows what its pools hold at that moment); the scheduler, for a
 * request that went elsewhere or never came (only it sees every node and the reservation's end).
 * The node judges at admission: KV that lands while the request waits in the queue still helps
 * it, but an advisory is there to have the KV ready when the request comes.
 */
export type AdvisoryOutcome = 'hit' | 'missed' | 'spurious';

export type AdvisoryOutcomeReason = 'found' | 'held' | 'partial' | 'absent' | 'moved' | 'expired';

export interface AdvisoryVerdict {
  readonly outcome: AdvisoryOutcome;
  readonly reason: AdvisoryOutcomeReason;
}

/** Every (outcome, reason) pair a verdict can be: the label sets of the outcome counter. */
export const ADVISORY_VERDICTS: readonly AdvisoryVerdict[] = [
  { outcome: 'hit', reason: 'found' },
  { outcome: 'hit', reason: 'held' },
  { outcome: 'missed', reason: 'partial' },
  { outcome: 'missed', reason: 'absent' },
  { outcome: 'missed', reason: 'moved' },
  { outcome: 'spurious', reason: 'expired' },
];

/**
 * The verdict when the advised session's request arrives on the advised node. `queued`: chunks
 * the advisory had the node pull; `present`: how many of them the node holds now (host pool or
 * staged on the device). A negative or fractional count is a caller's bug.
 */
export function judgeAdvisoryArrival(queued: number, present: number): AdvisoryVerdict {
  if (!Number.isInteger(queued) || !Number.isInteger(present) || queued < 0 || present < 0) {
    throw new RangeError(`advisory chunk counts must be non-negative integers, got queued=${queued} present=${present}`);
  }
  if (queued === 0) return { outcome: 'hit', reason: 'held' };
  if (present >= queued) return { outcome: 'hit', reason: 'found' };
  return { outcome: 'missed', reason: present === 0 ? 'absent' : 'partial' };
}

/** How a reservation ended on the scheduler without its request running on the advised node. */
export type ReservationEnd = 'moved' | 'expired' | 'withdrawn';

/** The scheduler's verdict on a reservation's end; null when the client withdrew it (not judged). */
export function judgeReservationEnd(end: ReservationEnd): AdvisoryVerdict | null {
  switch (end) {
    case 'moved':
      return { outcome: 'missed', reason: 'moved' };
    case 'expired':
      return { outcome: 'spurious', reason: 'expired' };
    case 'withdrawn':
      return null;
  }
}

/**
 * What becomes of a spent reservation's prefetch once its request was placed: `hit` (it ran on
 * the reserved node, which judges the advisory itself), `forget` (it ran elsewhere: the reserved
 * node drops what it prefetched in vain), or `kept_as_source` (it ran elsewhere and pulls its KV
 * from the reserved node: what that node prefetched is the source, and a forget sent with the
 * dispatch would drop it as the pull begins; in the live multi-round benchmark that was every
 * stale peer restore symphony had). Kept copies leave with the advisory's expiry, or first when
 * the node's host pool needs room.
 */
export function reservationPrefetchAfter(
  reservedNode: string,
  ranOn: string,
  sources: ReadonlyArray<{ readonly nodeId: string }>,
): 'hit' | 'forget' | 'kept_as_source' {
  if (reservedNode === ranOn) return 'hit';
  return sources.some((s) => s.nodeId === reservedNode) ? 'kept_as_source' : 'forget';
}
