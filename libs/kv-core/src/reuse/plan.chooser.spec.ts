import type { ProfiledPattern } from './pareto.frontier.js';
import { patternKey } from './pattern.grid.js';
import { choosePlan, type PlanRequest } from './plan.chooser.js';

function pt(key: string, quality: number, recomputedLayers: number, prefillMs: number): ProfiledPattern {
  const [r1, u1, r2] = key.split('-').map(Number) as [number, number, number];
  return { pattern: { r1, u1, r2 }, quality, meanKl: 1 - quality, recomputedLayers, eCacheBytesPerToken: 0, prefillMs };
}

// A frontier of a 6-layer pair, cheapest first.
const FRONTIER = [
  pt('0-0-0', 0.3, 0, 1),
  pt('0-2-3', 0.9, 1, 3),
  pt('0-2-4', 0.995, 2, 4),
  pt('0-1-4', 0.999, 3, 6),
  pt('0-0-6', 1, 6, 10),
];

describe(choosePlan.name, () => {
  const cases: Array<[string, PlanRequest, string | null, boolean?]> = [
    ['no budget: cheapest within 1%', { maxQualityLoss: 0.01, load: 0 }, '0-2-4'],
    ['no budget, exact floor: only recompute-everything', { maxQualityLoss: 0, load: 0 }, '0-0-6'],
    ['loose floor: more reuse', { maxQualityLoss: 0.2, load: 0 }, '0-2-3'],
    ['idle with slack: spend it on accuracy', { maxQualityLoss: 0.01, latencyBudgetMs: 20, load: 0 }, '0-0-6'],
    ['loaded: slack gone, more reuse', { maxQualityLoss: 0.01, latencyBudgetMs: 20, load: 2 }, '0-1-4'],
    ['heavily loaded: the cheapest within the floor', { maxQualityLoss: 0.01, latencyBudgetMs: 20, load: 4 }, '0-2-4'],
    ['nothing fits: cheapest within the floor, flagged', { maxQualityLoss: 0.01, latencyBudgetMs: 1, load: 0 }, '0-2-4', false],
    ['quality 0.99 meets a 1% floor exactly', { maxQualityLoss: 0.01, load: 0 }, '0-2-4'],
    [
      'waited, fresh would recompute everything: the wait is charged, more reuse',
      { maxQualityLoss: 0.01, latencyBudgetMs: 20, load: 0, waitedMs: 12 },
      '0-1-4',
    ],
    [
      'waited most of the budget: the cheapest within the floor',
      { maxQualityLoss: 0.01, latencyBudgetMs: 20, load: 0, waitedMs: 15 },
      '0-2-4',
    ],
    ['wait plus estimate exactly the budget: fits', { maxQualityLoss: 0.01, latencyBudgetMs: 20, load: 0, waitedMs: 10 }, '0-0-6'],
    ['wait and load together', { maxQualityLoss: 0.01, latencyBudgetMs: 20, load: 1, waitedMs: 9 }, '0-2-4'],
    [
      'waited past the budget: cheapest within the floor, flagged',
      { maxQualityLoss: 0.01, latencyBudgetMs: 20, load: 0, waitedMs: 25 },
      '0-2-4',
      false,
    ],
    ['waited without a budget: the cheapest, as ever', { maxQualityLoss: 0.01, load: 0, waitedMs: 1e6 }, '0-2-4'],
    ["no wait given: the whole budget is the prefill's", { maxQualityLoss: 0.01, latencyBudgetMs: 10, load: 0 }, '0-0-6'],
  ];
  it.each(cases)('%s', (_name, req, key, withinBudget = true) => {
    const sut = choosePlan(FRONTIER, req);
    expect(sut && patternKey(sut.point.pattern)).toBe(key);
    expect(sut?.withinBudget).toBe(withinBudget);
  });

  // The same frontier with task losses: reuse costs little of the held-out loss even where top-1 flips.
  const TASK = [
    { ...pt('0-0-0', 0.3, 0, 1), taskLoss: 0.2 },
    { ...pt('0-2-3', 0.9, 1, 3), taskLoss: 0.008 },
    { ...pt('0-2-4', 0.995, 2, 4), taskLoss: 0.003 },
    { ...pt('0-1-4', 0.999, 3, 6) },
    { ...pt('0-0-6', 1, 6, 10), taskLoss: 0 },
  ];
  const byMetric: Array<[string, PlanRequest, string | null]> = [
    ['default metric is top-1', { maxQualityLoss: 0.01, load: 0 }, '0-2-4'],
    ['top1 named', { maxQualityLoss: 0.01, load: 0, qualityMetric: 'top1' }, '0-2-4'],
    ['task: cheaper plan within 1% task loss', { maxQualityLoss: 0.01, load: 0, qualityMetric: 'task' }, '0-2-3'],
    ['task, tighter floor', { maxQualityLoss: 0.005, load: 0, qualityMetric: 'task' }, '0-2-4'],
    [
      'task, with slack: lowest task loss that fits; unmeasured never qualifies',
      { maxQualityLoss: 0.01, latencyBudgetMs: 9, load: 0, qualityMetric: 'task' },
      '0-2-4',
    ],
    ['task, exact floor: only recompute-everything', { maxQualityLoss: 0, load: 0, qualityMetric: 'task' }, '0-0-6'],
  ];
  it.each(byMetric)('quality metric: %s', (_name, req, key) => {
    expect(patternKey(choosePlan(TASK, req)!.point.pattern)).toBe(key);
  });

  it('task metric on a frontier without task losses: no plan (full prefill)', () => {
    expect(choosePlan(FRONTIER, { maxQualityLoss: 0.5, load: 0, qualityMetric: 'task' })).toBeNull();
  });

  it('floor at 0.99 agreement', () => {
    expect(patternKey(choosePlan([pt('0-2-4', 0.99, 2, 4), pt('0-0-6', 1, 6, 10)], { maxQualityLoss: 0.01, load: 0 })!.point.pattern)).toBe(
      '0-2-4',
    );
  });

  it('null when nothing meets the floor', () => {
    expect(choosePlan([pt('0-0-0', 0.3, 0, 1)], { maxQualityLoss: 0.01, load: 0 })).toBeNull();
    expect(choosePlan([], { maxQualityLoss: 0.01, load: 0 })).toBeNull();
  });

  it('estimates latency as profiled time stretched by load, the wait not included', () => {
    expect(choosePlan(FRONTIER, { maxQualityLoss: 0.01, load: 1 })!.estimatedMs).toBe(8);
    expect(choosePlan(FRONTIER, { maxQualityLoss: 0.01, latencyBudgetMs: 20, load: 0, waitedMs: 12 })!.estimatedMs).toBe(6);
  });

  const bad: Array<[string, PlanRequest]> = [
    ['negative loss', { maxQualityLoss: -0.1, load: 0 }],
    ['loss above 1', { maxQualityLoss: 2, load: 0 }],
    ['negative load', { maxQualityLoss: 0.01, load: -1 }],
    ['infinite load', { maxQualityLoss: 0.01, load: Infinity }],
    ['zero budget', { maxQualityLoss: 0.01, latencyBudgetMs: 0, load: 0 }],
    ['negative wait', { maxQualityLoss: 0.01, latencyBudgetMs: 20, load: 0, waitedMs: -1 }],
    ['NaN wait', { maxQualityLoss: 0.01, latencyBudgetMs: 20, load: 0, waitedMs: NaN }],
    ['unknown metric', { maxQualityLoss: 0.01, load: 0, qualityMetric: 'bleu' as never }],
  ];
  it.each(bad)('rejects %s', (_name, req) => {
    expect(() => choosePlan(FRONTIER, req)).toThrow(RangeError);
  });
});
