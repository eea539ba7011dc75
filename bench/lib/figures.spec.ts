import {
  arg,
  clamp,
  counter,
  exponential,
  histogramQuantile,
  lognormal,
  median,
  parseMetrics,
  percentile,
  quantile,
  ratio,
  rng,
  round,
} from './figures.mjs';

const PAGE = [
  '# HELP mnemo_kv_hit_tokens_total Restored tokens by tier',
  '# TYPE mnemo_kv_hit_tokens_total counter',
  'mnemo_kv_hit_tokens_total{service="node-manager",tier="host"} 300',
  'mnemo_kv_hit_tokens_total{service="node-manager",tier="ssd"} 50',
  'mnemo_kv_hit_tokens_total{service="node-manager",src_tier="host",tier="peer"} 7',
  'mnemo_node_preemptions_total{service="node-manager"} 4',
  'mnemo_quote_total{service="a",path="x\\"}y"} 2',
  'mnemo_io_seconds_bucket{service="n",le="0.001"} 10',
  'mnemo_io_seconds_bucket{service="n",le="0.01"} 90',
  'mnemo_io_seconds_bucket{service="n",le="+Inf"} 100',
  'mnemo_io_seconds_sum{service="n"} 0.5',
  'mnemo_io_seconds_count{service="n"} 100',
].join('\n');

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

  describe(counter.name, () => {
    it.each<[string, string, Record<string, string>, number]>([
      ['sums every series of the name (all tiers)', 'mnemo_kv_hit_tokens_total', {}, 357],
      ['one label picks its series', 'mnemo_kv_hit_tokens_total', { tier: 'host' }, 300],
      ['a label matches exactly: tier="host" is not src_tier="host"', 'mnemo_kv_hit_tokens_total', { tier: 'peer' }, 7],
      ['an unlabelled counter (default labels aside)', 'mnemo_node_preemptions_total', {}, 4],
      ['a name that is a prefix of another is not that other', 'mnemo_node_preemptions', {}, 0],
      ['never incremented reads 0', 'mnemo_missing_total', {}, 0],
      ['escaped quotes inside a label value', 'mnemo_quote_total', { path: 'x"}y' }, 2],
    ])('%s', (_n, name, labels, expected) => {
      expect(counter(PAGE, name, labels)).toBe(expected);
    });

    it('reads parsed samples as well as text', () => {
      expect(counter(parseMetrics(PAGE), 'mnemo_kv_hit_tokens_total', { tier: 'ssd' })).toBe(50);
    });
  });

  describe(histogramQuantile.name, () => {
    it('interpolates inside the bucket that holds the rank', () => {
      expect(histogramQuantile(PAGE, 'mnemo_io_seconds', 0.5)).toBeCloseTo(0.001 + 0.009 * (40 / 80), 9);
    });
    it('a rank in the +Inf bucket answers the last finite bound', () => {
      expect(histogramQuantile(PAGE, 'mnemo_io_seconds', 0.99)).toBe(0.01);
    });
    it('no observations: null', () => {
      expect(histogramQuantile(PAGE, 'mnemo_other_seconds', 0.5)).toBeNull();
    });
  });
});
