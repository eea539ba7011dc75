import { arg, clamp, exponential, lognormal, median, ratio, rng, round } from './figures.js';

describe('bench figures', () => {
  describe(rng.name, () => {
    it('is seeded: one seed, one sequence; another seed, another', () => {
      const a = rng(7);
      const b = rng(7);
      const c = rng(8);
      const xs = Array.from({ length: 5 }, () => a());
      expect(Array.from({ length: 5 }, () => b())).toEqual(xs);
      expect(Array.from({ length: 5 }, () => c())).not.toEqual(xs);
      for (const x of xs) expect(x >= 0 && x < 1).toBe(true);
    });

    it('draws means that converge (log-normal median, exponential mean)', () => {
      const r = rng(1);
      const ln = Array.from({ length: 20_000 }, () => lognormal(r, 100, 0.8));
      const ex = Array.from({ length: 20_000 }, () => exponential(r, 50));
      expect(median(ln)).toBeGreaterThan(95);
      expect(median(ln)).toBeLessThan(105);
      const exMean = ex.reduce((s, x) => s + x, 0) / ex.length;
      expect(exMean).toBeGreaterThan(48);
      expect(exMean).toBeLessThan(52);
    });
  });

  it.each<[string, number | null | undefined, number | undefined, number | null]>([
    ['two decimals by default', 1.23456, undefined, 1.23],
    ['given decimals', 1.23456, 3, 1.235],
    ['null stays null', null, 2, null],
    ['undefined is null', undefined, 2, null],
    ['NaN is null', NaN, 2, null],
  ])('round: %s', (_n, x, d, expected) => {
    expect(round(x, d)).toBe(expected);
  });

  it('ratio: none when either side is missing or the divisor is 0', () => {
    expect(ratio(3, 2)).toBe(1.5);
    expect(ratio(3, 0)).toBeNull();
    expect(ratio(null, 2)).toBeNull();
  });

  it('clamp rounds into range', () => {
    expect([clamp(2.6, 0, 10), clamp(-3, 0, 10), clamp(99, 0, 10)]).toEqual([3, 0, 10]);
  });

  it('arg reads --name value and --name=value', () => {
    expect(arg('passes', '3', ['node', 'x', '--passes', '5'])).toBe('5');
    expect(arg('passes', '3', ['node', 'x', '--passes=4'])).toBe('4');
    expect(arg('passes', '3', ['node', 'x'])).toBe('3');
  });
});
