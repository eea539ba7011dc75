import { BoundedRecords } from './bounded.records.js';

describe(BoundedRecords.name, () => {
  it.each<[string, (sut: BoundedRecords<string, number>, clock: { t: number }) => void, Record<string, number | undefined>]>([
    ['keeps what fits', (s) => (s.set('a', 1), s.set('b', 2)), { a: 1, b: 2 }],
    [
      'forgets the oldest past the count',
      (s) => (s.set('a', 1), s.set('b', 2), s.set('c', 3), s.set('d', 4)),
      { a: undefined, b: 2, d: 4 },
    ],
    ['a set refreshes its age', (s) => (s.set('a', 1), s.set('b', 2), s.set('c', 3), s.set('a', 9), s.set('d', 4)), { a: 9, b: undefined }],
    ['forgets what is older than the TTL', (s, c) => (s.set('a', 1), (c.t += 1001), s.set('b', 2)), { a: undefined, b: 2 }],
    ['a get past the TTL finds nothing', (s, c) => (s.set('a', 1), (c.t += 1001)), { a: undefined }],
  ])('%s', (_n, act, want) => {
    const clock = { t: 0 };
    const sut = new BoundedRecords<string, number>(3, 1000, () => clock.t);
    act(sut, clock);
    for (const [k, v] of Object.entries(want)) expect(sut.get(k)).toBe(v);
    expect(sut.size).toBeLessThanOrEqual(3);
  });
});
