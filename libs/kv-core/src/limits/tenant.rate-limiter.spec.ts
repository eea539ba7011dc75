import { TenantRateLimiter, type RateLimit } from './tenant.rate-limiter.js';

/** `[tenant, atMs]` attempts → what each got ('ok' or the retry-after ms). */
type Attempt = readonly [string, number];

describe(TenantRateLimiter.name, () => {
  const limit: RateLimit = { ratePerSec: 2, burst: 3 };

  it.each<[string, RateLimit, readonly Attempt[], ReadonlyArray<'ok' | number>]>([
    [
      'a burst is allowed at once, the next waits for one refill (500 ms at 2/s)',
      limit,
      [
        ['a', 0],
        ['a', 0],
        ['a', 0],
        ['a', 0],
      ],
      ['ok', 'ok', 'ok', 500],
    ],
    [
      'the wait shrinks as the bucket refills',
      limit,
      [
        ['a', 0],
        ['a', 0],
        ['a', 0],
        ['a', 200],
      ],
      ['ok', 'ok', 'ok', 300],
    ],
    [
      'one refill lets exactly one more through',
      limit,
      [
        ['a', 0],
        ['a', 0],
        ['a', 0],
        ['a', 500],
        ['a', 500],
      ],
      ['ok', 'ok', 'ok', 'ok', 500],
    ],
    [
      'a refill never exceeds the burst',
      limit,
      [
        ['a', 0],
        ['a', 60_000],
        ['a', 60_000],
        ['a', 60_000],
        ['a', 60_000],
      ],
      ['ok', 'ok', 'ok', 'ok', 500],
    ],
    [
      'tenants have their own buckets',
      limit,
      [
        ['a', 0],
        ['a', 0],
        ['a', 0],
        ['a', 0],
        ['b', 0],
      ],
      ['ok', 'ok', 'ok', 500, 'ok'],
    ],
    [
      'a refused attempt takes nothing',
      limit,
      [
        ['a', 0],
        ['a', 0],
        ['a', 0],
        ['a', 0],
        ['a', 0],
        ['a', 500],
      ],
      ['ok', 'ok', 'ok', 500, 500, 'ok'],
    ],
    [
      'a clock stepping back refills nothing',
      limit,
      [
        ['a', 1000],
        ['a', 1000],
        ['a', 1000],
        ['a', 0],
        ['a', 500],
      ],
      ['ok', 'ok', 'ok', 500, 500],
    ],
    [
      'fractional rates: one per 10 s',
      { ratePerSec: 0.1, burst: 1 },
      [
        ['a', 0],
        ['a', 0],
        ['a', 9_999],
        ['a', 10_000],
      ],
      ['ok', 10_000, 1, 'ok'],
    ],
  ])('%s', (_name, l, attempts, want) => {
    const sut = new TenantRateLimiter(l);
    expect(
      attempts.map(([t, at]) => {
        const d = sut.take(t, at);
        return d.ok ? 'ok' : d.retryAfterMs;
      }),
    ).toEqual(want);
  });

  it.each<[string, RateLimit]>([
    ['zero rate', { ratePerSec: 0, burst: 1 }],
    ['NaN rate', { ratePerSec: NaN, burst: 1 }],
    ['infinite rate', { ratePerSec: Infinity, burst: 1 }],
    ['zero burst', { ratePerSec: 1, burst: 0 }],
    ['fractional burst', { ratePerSec: 1, burst: 1.5 }],
  ])('refuses %s', (_n, l) => {
    expect(() => new TenantRateLimiter(l)).toThrow(RangeError);
  });

  describe('bounded tenants', () => {
    it('forgets full buckets first: they carry no state', () => {
      const sut = new TenantRateLimiter(limit, 2);
      sut.take('a', 0);
      sut.take('a', 0);
      sut.take('a', 0);
      sut.take('b', 0);
      // At 1 s b is full again (2 + 2 ≥ 3) and is forgotten for c; a (0 + 2 < 3) keeps its state.
      sut.take('c', 1000);
      expect(sut.tenants).toBe(2);
      // a kept its state: it has 2 tokens, then waits.
      expect([sut.take('a', 1000).ok, sut.take('a', 1000).ok, sut.take('a', 1000).ok]).toEqual([true, true, false]);
    });

    it('with no full bucket, forgets the least recently used, never holding more than the bound', () => {
      const sut = new TenantRateLimiter(limit, 2);
      for (const t of ['a', 'b']) for (let i = 0; i < 3; i++) sut.take(t, 0);
      sut.take('a', 0); // a touched last: b is the least recently used
      sut.take('c', 0);
      expect(sut.tenants).toBe(2);
      expect(sut.take('a', 0).ok).toBe(false); // a was kept, still empty
      expect(sut.tenants).toBe(2);
    });
  });
});
