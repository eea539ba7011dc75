import { mean, median, percentile, quantile } from './quantiles.js';

describe('stats', () => {
  describe(percentile.name, () => {
    const hundred = Array.from({ length: 100 }, (_, i) => 100 - i); // 100..1, unsorted on purpose
    it.each<[string, Array<number | null>, number, number | null]>([
      ['p50 of 1..100 is 50 (nearest rank)', hundred, 50, 50],
      ['p99 of 1..100 is 99, not the largest', hundred, 99, 99],
      ['p100 is the largest', hundred, 100, 100],
      ['a tiny p is the smallest', hundred, 0.1, 1],
      ['one sample is every percentile', [3], 99, 3],
      ['missing samples are left out', [null, 5, null, 1], 50, 1],
      ['no samples: null, not 0', [], 50, null],
    ])('%s', (_n, xs, p, expected) => {
      expect(percentile(xs, p)).toBe(expected);
    });

    it('takes p in percent and refuses a fraction-looking 0 or out-of-range p', () => {
      expect(() => percentile([1], 0)).toThrow(RangeError);
      expect(() => percentile([1], 101)).toThrow(RangeError);
    });
  });

  it.each<[string, Array<number | null>, number, number | null]>([
    ['interpolates between the two nearest', [4, 1, 3, 2], 0.5, 2.5],
    ['a quarter of the way', [0, 10, 20, 30, 40], 0.3, 12],
    ['the ends are the smallest and the largest', [5, 9, 7], 1, 9],
    ['one sample is every quantile', [7], 0.9, 7],
    ['missing samples are left out', [null, 2, 4], 0.5, 3],
    ['no samples: null', [], 0.5, null],
  ])('quantile: %s', (_n, xs, q, expected) => {
    expect(quantile(xs, q)).toEqual(expected === null ? null : expect.closeTo(expected, 9));
  });

  it('quantile refuses q outside [0, 1]', () => {
    expect(() => quantile([1], 1.5)).toThrow(RangeError);
    expect(() => quantile([1], -0.1)).toThrow(RangeError);
  });

  it.each<[string, number[], number | null]>([
    ['odd count: the middle', [3, 1, 2], 2],
    ['even count: mean of the two middles', [4, 1, 3, 2], 2.5],
    ['empty: null', [], null],
  ])('median: %s', (_n, xs, expected) => {
    expect(median(xs)).toBe(expected);
  });

  it.each<[string, Array<number | null>, number | null]>([
    ['the arithmetic mean', [1, 2, 6], 3],
    ['missing samples are left out', [null, 4, NaN, 8], 6],
    ['empty: null', [], null],
  ])('mean: %s', (_n, xs, expected) => {
    expect(mean(xs)).toBe(expected);
  });
});
