import {
  ADVISORY_VERDICTS,
  judgeAdvisoryArrival,
  judgeReservationEnd,
  reservationPrefetchAfter,
  type AdvisoryVerdict,
  type ReservationEnd,
} from './advisory.outcome.js';

describe(judgeAdvisoryArrival.name, () => {
  it.each<[string, number, number, AdvisoryVerdict]>([
    ['nothing to pull: the node held the prefix already', 0, 0, { outcome: 'hit', reason: 'held' }],
    ['every pulled chunk is here', 3, 3, { outcome: 'hit', reason: 'found' }],
    ['more here than queued (a chunk another advisory also pulled)', 2, 3, { outcome: 'hit', reason: 'found' }],
    ['one chunk still in flight or purged', 3, 2, { outcome: 'missed', reason: 'partial' }],
    ['nothing landed yet', 3, 0, { outcome: 'missed', reason: 'absent' }],
    ['a single chunk, landed', 1, 1, { outcome: 'hit', reason: 'found' }],
    ['a single chunk, not landed', 1, 0, { outcome: 'missed', reason: 'absent' }],
  ])('%s', (_name, queued, present, verdict) => {
    expect(judgeAdvisoryArrival(queued, present)).toEqual(verdict);
  });

  it.each<[number, number]>([
    [-1, 0],
    [1, -1],
    [1.5, 1],
    [Number.NaN, 0],
  ])('rejects counts (%p, %p)', (queued, present) => {
    expect(() => judgeAdvisoryArrival(queued, present)).toThrow(RangeError);
  });
});

describe(judgeReservationEnd.name, () => {
  it.each<[ReservationEnd, AdvisoryVerdict | null]>([
    ['moved', { outcome: 'missed', reason: 'moved' }],
    ['expired', { outcome: 'spurious', reason: 'expired' }],
    ['withdrawn', null],
  ])('%s', (end, verdict) => {
    expect(judgeReservationEnd(end)).toEqual(verdict);
  });
});

describe(reservationPrefetchAfter.name, () => {
  it.each<[string, string, string[], ReturnType<typeof reservationPrefetchAfter>]>([
    ['ran on the reserved node', 'b', [], 'hit'],
    ['ran on the reserved node, pulling from another', 'b', ['c'], 'hit'],
    ['ran elsewhere, pulling nothing', 'a', [], 'forget'],
    ['ran elsewhere, pulling from a third node', 'a', ['c'], 'forget'],
    ['ran elsewhere, pulling from the reserved node', 'a', ['b'], 'kept_as_source'],
    ['ran elsewhere, pulling from the reserved node among others', 'a', ['c', 'b'], 'kept_as_source'],
  ])('%s', (_, ranOn, sources, after) => {
    expect(
      reservationPrefetchAfter(
        'b',
        ranOn,
        sources.map((nodeId) => ({ nodeId })),
      ),
    ).toBe(after);
  });
});

describe('ADVISORY_VERDICTS', () => {
  it('lists every verdict either judge can give, once', () => {
    const given = new Set<string>();
    for (const [q, p] of [
      [0, 0],
      [2, 2],
      [2, 1],
      [2, 0],
    ])
      given.add(JSON.stringify(judgeAdvisoryArrival(q!, p!)));
    for (const end of ['moved', 'expired'] as const) given.add(JSON.stringify(judgeReservationEnd(end)));
    expect(new Set(ADVISORY_VERDICTS.map((v) => JSON.stringify(v)))).toEqual(given);
    expect(ADVISORY_VERDICTS).toHaveLength(given.size);
  });
});
