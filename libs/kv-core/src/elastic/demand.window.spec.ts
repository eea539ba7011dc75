import { DemandWindow } from './demand.window.js';

describe(DemandWindow.name, () => {
  it.each([
    ['empty window is 0', [], 100, 0],
    ['single sample inside', [[10, 5]], 20, 5],
    ['sample exactly window old has left', [[0, 5]], 100, 0],
    [
      'larger old sample dominates while inside',
      [
        [0, 9],
        [50, 3],
      ],
      99,
      9,
    ],
    [
      'once the large one leaves, the later smaller one shows',
      [
        [0, 9],
        [50, 3],
      ],
      120,
      3,
    ],
    [
      'a later larger sample replaces earlier ones',
      [
        [0, 3],
        [10, 9],
        [20, 4],
      ],
      105,
      9,
    ],
    [
      'everything expired',
      [
        [0, 3],
        [10, 9],
      ],
      500,
      0,
    ],
  ] as Array<[string, Array<[number, number]>, number, number]>)('%s', (_n, samples, now, expected) => {
    const sut = new DemandWindow(100);
    for (const [t, v] of samples) sut.record(t, v);
    expect(sut.max(now)).toBe(expected);
  });

  it('matches a brute-force maximum over a long random trace', () => {
    const sut = new DemandWindow(50);
    const all: Array<[number, number]> = [];
    let seed = 7;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let t = 0; t < 5000; t += 1 + Math.floor(rnd() * 5)) {
      const v = Math.floor(rnd() * 1000);
      sut.record(t, v);
      all.push([t, v]);
      const brute = Math.max(0, ...all.filter(([s]) => s > t - 50).map(([, x]) => x));
      expect(sut.max(t)).toBe(brute);
    }
  });

  it.each([[0], [-1], [Number.NaN]])('rejects window %p', (w) => {
    expect(() => new DemandWindow(w)).toThrow(RangeError);
  });
});
