import { Distribution } from './distribution.js';
import { SeededRng } from './seeded.rng.js';

describe(Distribution.name, () => {
  it.each<[number, number]>([
    [0, 1],
    [0.5, 3],
    [1, 5],
    [0.25, 2],
    [0.125, 1.5],
  ])('quantile %p of 1..5 is %p', (q, want) => {
    expect(new Distribution([5, 1, 3, 2, 4]).quantile(q)).toBeCloseTo(want, 9);
  });

  it('draws deterministically for a seed, within the samples, near their mean', () => {
    const sut = new Distribution([1, 2, 3, 10]);
    const draw = (seed: number) => {
      const rng = new SeededRng(seed);
      return Array.from({ length: 2000 }, () => sut.draw(rng));
    };
    const a = draw(7);
    expect(draw(7)).toEqual(a);
    expect(draw(8)).not.toEqual(a);
    expect(Math.min(...a)).toBeGreaterThanOrEqual(1);
    expect(Math.max(...a)).toBeLessThanOrEqual(10);
    // Linear interpolation between sorted samples: the mean of draws is the area under the quantile function.
    expect(a.reduce((s, x) => s + x, 0) / a.length).toBeCloseTo((1.5 + 2.5 + 6.5) / 3, 0);
  });

  it('a constant is its one sample', () => {
    expect(Distribution.constant(4).draw(new SeededRng(1))).toBe(4);
  });

  it.each([[[]], [[1, -1]], [[NaN]]])('refuses %p', (samples) => {
    expect(() => new Distribution(samples)).toThrow(RangeError);
  });
});

describe(SeededRng.name, () => {
  it("is the benchmarks' mulberry32: the same first draws for a seed", () => {
    const r = new SeededRng(20261123);
    // @mnemo/testkit rng(20261123)'s first three draws: the workload generator's stream.
    expect(Array.from({ length: 3 }, () => r.next())).toEqual([0.9007212214637548, 0.843700616620481, 0.4729218122083694]);
  });
});
