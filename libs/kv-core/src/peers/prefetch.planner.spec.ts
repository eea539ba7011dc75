import { planPrefetchPulls, prefetchExpiry } from './prefetch.planner.js';

describe(planPrefetchPulls.name, () => {
  it.each<[string, string[], string[][], string[], Array<[number, string[]]>]>([
    ['nothing offered', ['a', 'b'], [], [], []],
    ['one source, in chunk order', ['a', 'b', 'c'], [['c', 'a', 'b']], [], [[0, ['a', 'b', 'c']]]],
    ['held on host: not pulled again', ['a', 'b', 'c'], [['a', 'b', 'c']], ['b'], [[0, ['a', 'c']]]],
    [
      'the first source offering a chunk serves it',
      ['a', 'b', 'c'],
      [['b'], ['a', 'b', 'c']],
      [],
      [
        [1, ['a', 'c']],
        [0, ['b']],
      ],
    ],
    ['a chunk nobody offers is skipped', ['a', 'x', 'c'], [['a', 'c']], [], [[0, ['a', 'c']]]],
  ])('%s', (_name, keys, offers, held, want) => {
    const sut = planPrefetchPulls(
      keys,
      offers.map((chunkKeys) => ({ chunkKeys })),
      (k) => held.includes(k),
    );
    expect(sut.map((p) => [p.source, p.chunks.map((c) => c.key)])).toEqual(want);
    for (const p of sut) for (const c of p.chunks) expect(keys[c.position]).toBe(c.key);
  });
});

describe(prefetchExpiry.name, () => {
  it.each<[string, number, number | null]>([
    ['no expiry named: the node TTL', 0, 1_000 + 60],
    ['its own expiry', 1_100, 1_100],
    ['bounded by ten TTLs', 99_999, 1_000 + 600],
    ['expired before it arrived', 1_000, null],
  ])('%s', (_name, expiresAt, want) => {
    expect(prefetchExpiry(expiresAt, 1_000, 60)).toBe(want);
  });
});
