import { SessionDemand, type LiveDemand } from './session.demand.js';

type Served = [session: string, atMs: number, tokens: number];

describe(SessionDemand.name, () => {
  it.each([
    // name, window, cap, served turns, ended sessions, now, live requests, demand
    ['nothing served: the live requests alone', 100, undefined, [], [], 50, [['a', 30]], 30],
    ['a session served inside the window adds what it held', 100, undefined, [['b', 10, 40]], [], 50, [['a', 30]], 70],
    ['served exactly a window ago: expired', 100, undefined, [['b', 0, 40]], [], 100, [['a', 30]], 30],
    ['served just inside the window', 100, undefined, [['b', 1, 40]], [], 100, [['a', 30]], 70],
    ['a live session is counted once, at its live size', 100, undefined, [['a', 10, 25]], [], 50, [['a', 30]], 30],
    [
      'a later turn replaces the earlier one',
      100,
      undefined,
      [
        ['b', 10, 40],
        ['b', 20, 60],
      ],
      [],
      50,
      [],
      60,
    ],
    [
      're-serving renews the window',
      100,
      undefined,
      [
        ['b', 0, 40],
        ['c', 10, 5],
        ['b', 90, 60],
      ],
      [],
      105,
      [],
      65,
    ],
    [
      'an ended session no longer counts',
      100,
      undefined,
      [
        ['b', 10, 40],
        ['c', 20, 5],
      ],
      ['b'],
      50,
      [],
      5,
    ],
    [
      'recent sessions capped by what the cache may hold',
      100,
      50,
      [
        ['b', 10, 40],
        ['c', 20, 30],
      ],
      [],
      50,
      [['a', 30]],
      80,
    ],
    [
      'the cap applies after live sessions are left out',
      100,
      50,
      [
        ['b', 10, 40],
        ['c', 20, 30],
      ],
      [],
      50,
      [['c', 35]],
      75,
    ],
    ['window 0 is the live-only rule', 0, undefined, [['b', 10, 40]], [], 10, [['a', 30]], 30],
    [
      'a turn served after the query time still counts (it finished while this request queued)',
      100,
      undefined,
      [['b', 60, 40]],
      [],
      50,
      [['a', 30]],
      70,
    ],
  ] as Array<[string, number, number | undefined, Served[], string[], number, Array<[string, number]>, number]>)(
    '%s',
    (_n, window, cap, served, ended, now, live, expected) => {
      const sut = new SessionDemand(window, cap);
      for (const [s, t, tokens] of served) sut.served(s, t, tokens);
      for (const s of ended) sut.ended(s);
      const requests: LiveDemand[] = live.map(([session, tokens]) => ({ session, tokens }));
      expect(sut.demand(now, requests)).toBe(expected);
    },
  );

  it('matches a brute-force sum over a long random trace', () => {
    const window = 50;
    const sut = new SessionDemand(window);
    const last = new Map<string, [number, number]>();
    let seed = 11;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let t = 0; t < 3000; t += 1 + Math.floor(rnd() * 4)) {
      const s = `s${Math.floor(rnd() * 20)}`;
      const tokens = Math.floor(rnd() * 1000);
      sut.served(s, t, tokens);
      last.set(s, [t, tokens]);
      const live = new Set([`s${Math.floor(rnd() * 20)}`]);
      const brute = [...last].filter(([k, [at]]) => at > t - window && !live.has(k)).reduce((a, [, [, x]]) => a + x, 0);
      expect(sut.recentTokens(t, live)).toBe(brute);
    }
  });

  it.each([
    ['a negative window', () => new SessionDemand(-1)],
    ['a NaN window', () => new SessionDemand(Number.NaN)],
    ['a negative cap', () => new SessionDemand(10, -1)],
    ['fractional tokens', () => new SessionDemand(10).served('a', 0, 1.5)],
    [
      'time going back',
      () => {
        const sut = new SessionDemand(10);
        sut.served('a', 5, 1);
        sut.served('b', 4, 1);
      },
    ],
  ])('rejects %s', (_n, f) => {
    expect(f).toThrow(RangeError);
  });
});
