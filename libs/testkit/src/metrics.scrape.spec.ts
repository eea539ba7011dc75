import { Registry, Counter, Histogram, Gauge } from 'prom-client';
import {
  exposedSeries,
  bucketUpperBound,
  counter,
  histogramQuantile,
  metricValue,
  parseMetrics,
  samplesOf,
  selectValue,
} from './metrics.scrape.js';

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

describe(parseMetrics.name, () => {
  // A page written by prom-client itself (what every Mnemo service serves), with a default label.
  async function page(): Promise<string> {
    const reg = new Registry();
    reg.setDefaultLabels({ service: 'node-a' });
    const c = new Counter({ name: 'mnemo_x_total', help: 'x', labelNames: ['outcome'], registers: [reg] });
    c.inc({ outcome: 'ok' }, 3);
    c.inc({ outcome: 'a "quoted"\nvalue' }, 2);
    new Gauge({ name: 'mnemo_live_nodes', help: 'n', registers: [reg] }).set(4);
    const h = new Histogram({ name: 'mnemo_gap_seconds', help: 'g', labelNames: ['kind'], buckets: [0.1, 0.5, 1], registers: [reg] });
    for (const v of [0.05, 0.2, 0.3, 0.7, 2]) h.observe({ kind: 'a' }, v);
    h.observe({ kind: 'b' }, 0.01);
    return reg.metrics();
  }

  const cases: Array<{ name: string; read: (f: ReturnType<typeof parseMetrics>) => unknown; want: unknown }> = [
    { name: 'a gauge without labels', read: (f) => metricValue(f, 'mnemo_live_nodes'), want: 4 },
    { name: 'a counter by one label, extra labels ignored', read: (f) => metricValue(f, 'mnemo_x_total', { outcome: 'ok' }), want: 3 },
    {
      name: 'an escaped label value matches its unescaped text',
      read: (f) => metricValue(f, 'mnemo_x_total', { outcome: 'a "quoted"\nvalue' }),
      want: 2,
    },
    { name: 'a counter summed over its labels', read: (f) => counter(f, 'mnemo_x_total'), want: 5 },
    { name: 'an absent family reads undefined', read: (f) => metricValue(f, 'mnemo_absent'), want: undefined },
    { name: 'an absent family sums to 0', read: (f) => counter(f, 'mnemo_absent'), want: 0 },
    { name: 'a label no sample has matches none', read: (f) => samplesOf(f, 'mnemo_x_total', { outcome: 'no' }).length, want: 0 },
    { name: 'a labelled histogram counts its observations', read: (f) => metricValue(f, 'mnemo_gap_seconds', { kind: 'a' }), want: 5 },
    { name: 'each label set is its own histogram', read: (f) => metricValue(f, 'mnemo_gap_seconds', { kind: 'b' }), want: 1 },
    { name: 'a histogram keeps its sum', read: (f) => samplesOf(f, 'mnemo_gap_seconds', { kind: 'b' })[0]?.sum, want: 0.01 },
    {
      name: 'the median falls in the 0.5 bucket',
      read: (f) => bucketUpperBound(samplesOf(f, 'mnemo_gap_seconds', { kind: 'a' })[0], 0.5),
      want: 0.5,
    },
    {
      name: 'p99 falls in +Inf',
      read: (f) => bucketUpperBound(samplesOf(f, 'mnemo_gap_seconds', { kind: 'a' })[0], 0.99),
      want: Infinity,
    },
    { name: 'no _bucket family is left beside the histogram', read: (f) => f.has('mnemo_gap_seconds_bucket'), want: false },
    { name: 'a selector with labels', read: (f) => selectValue(f, 'mnemo_x_total{outcome="ok"}'), want: 3 },
    { name: 'a selector without labels takes the first sample', read: (f) => selectValue(f, 'mnemo_live_nodes'), want: 4 },
    { name: "a selector reads a histogram's _count", read: (f) => selectValue(f, 'mnemo_gap_seconds_count{kind="a"}'), want: 5 },
    { name: "a selector reads a histogram's _sum", read: (f) => selectValue(f, 'mnemo_gap_seconds_sum{kind="b"}'), want: 0.01 },
    { name: 'a selector reads one bucket', read: (f) => selectValue(f, 'mnemo_gap_seconds_bucket{kind="a",le="0.5"}'), want: 3 },
    { name: 'a selector reads the +Inf bucket', read: (f) => selectValue(f, 'mnemo_gap_seconds_bucket{le="+Inf",kind="a"}'), want: 5 },
    { name: 'a _count of a counter family is not invented', read: (f) => selectValue(f, 'mnemo_x_count'), want: undefined },
    {
      name: 'a sample with no buckets has no bound',
      read: (f) => bucketUpperBound(samplesOf(f, 'mnemo_live_nodes')[0], 0.5),
      want: undefined,
    },
  ];

  it('refuses text that is not a selector', async () => {
    expect(() => selectValue(parseMetrics(''), 'not a selector')).toThrow(RangeError);
  });

  it.each(cases)('$name', async ({ read, want }) => {
    expect(read(parseMetrics(await page()))).toEqual(want);
  });
});

describe('a page written by hand (no TYPE lines)', () => {
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

describe(exposedSeries.name, () => {
  const text = [
    '# HELP h a histogram',
    '# TYPE h histogram',
    'h_bucket{le="0.1",service="node-manager"} 1',
    'h_sum{service="node-manager"} 0.05',
    'h_count{service="node-manager"} 1',
    '# TYPE c counter',
    '# TYPE g gauge',
    'g 3',
  ].join('\n');

  it('tells declared families from series with samples, a histogram by its three series', () => {
    const { types, sampled } = exposedSeries(text);
    expect(types).toEqual(
      new Map([
        ['h', 'histogram'],
        ['c', 'counter'],
        ['g', 'gauge'],
      ]),
    );
    expect([...sampled].sort()).toEqual(['g', 'h_bucket', 'h_count', 'h_sum']);
  });
});
