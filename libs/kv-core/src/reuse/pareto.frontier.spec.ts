import { bothFrontiers, paretoFrontier, profiledPattern, qualityLoss, type ProfiledPattern } from './pareto.frontier.js';
import { patternKey } from './pattern.grid.js';

function pt(key: string, quality: number, recomputedLayers: number, extra: Partial<ProfiledPattern> = {}): ProfiledPattern {
  const [r1, u1, r2] = key.split('-').map(Number) as [number, number, number];
  return {
    pattern: { r1, u1, r2 },
    quality,
    meanKl: 1 - quality,
    recomputedLayers,
    eCacheBytesPerToken: 0,
    prefillMs: recomputedLayers,
    ...extra,
  };
}

describe(paretoFrontier.name, () => {
  const cases: Array<[string, ProfiledPattern[], string[]]> = [
    ['empty', [], []],
    ['one point', [pt('0-0-4', 1, 4)], ['0-0-4']],
    ['dominated point dropped', [pt('0-0-0', 0.3, 0), pt('0-1-2', 0.2, 1), pt('0-0-4', 1, 4)], ['0-0-0', '0-0-4']],
    ['rising staircase kept, cheapest first', [pt('0-0-4', 1, 4), pt('0-1-3', 0.9, 2), pt('0-0-0', 0.3, 0)], ['0-0-0', '0-1-3', '0-0-4']],
    ['equal cost: the better one', [pt('0-1-3', 0.8, 2), pt('0-2-4', 0.95, 2)], ['0-2-4']],
    ['equal quality: the cheaper one', [pt('0-0-4', 1, 4), pt('0-2-4', 1, 2)], ['0-2-4']],
    ['equal quality and layers: lower KL wins', [pt('0-1-3', 0.9, 2, { meanKl: 0.2 }), pt('0-2-4', 0.9, 2, { meanKl: 0.1 })], ['0-2-4']],
    ['equal layers: no E cache is cheaper', [pt('0-2-4', 0.9, 2, { eCacheBytesPerToken: 1024 }), pt('0-0-2', 0.9, 2)], ['0-0-2']],
  ];
  it.each(cases)('%s', (_name, points, keys) => {
    const sut = paretoFrontier(points);
    expect(sut.map((p) => patternKey(p.pattern))).toEqual(keys);
  });

  it('quality strictly rises and cost never falls along the frontier', () => {
    const points = Array.from({ length: 40 }, (_, i) => pt(`0-${i % 7}-${7}`, ((i * 37) % 100) / 100, i % 8));
    const sut = paretoFrontier(points);
    for (let i = 1; i < sut.length; i++) {
      expect(sut[i]!.quality).toBeGreaterThan(sut[i - 1]!.quality);
      expect(sut[i]!.recomputedLayers).toBeGreaterThanOrEqual(sut[i - 1]!.recomputedLayers);
    }
  });

  const task: Array<[string, ProfiledPattern[], string[]]> = [
    [
      'task metric: a plan worse on top-1 but better on task loss is on the task frontier',
      [pt('0-0-0', 0.3, 0, { taskLoss: 0.2 }), pt('0-1-2', 0.2, 1, { taskLoss: 0.01 }), pt('0-0-4', 1, 4, { taskLoss: 0 })],
      ['0-0-0', '0-1-2', '0-0-4'],
    ],
    [
      'task metric: unmeasured points drop behind measured ones',
      [pt('0-0-0', 0.9, 0), pt('0-0-4', 1, 4, { taskLoss: 0 })],
      ['0-0-0', '0-0-4'],
    ],
    [
      'task metric: equal task loss, the cheaper',
      [pt('0-0-4', 1, 4, { taskLoss: 0, meanKl: 0 }), pt('0-2-4', 0.7, 2, { taskLoss: 0, meanKl: 0 })],
      ['0-2-4'],
    ],
  ];
  it.each(task)('%s', (_name, points, keys) => {
    expect(paretoFrontier(points, 'task').map((p) => patternKey(p.pattern))).toEqual(keys);
  });

  it("both frontiers: the union of each metric's, cheapest first", () => {
    const points = [
      pt('0-0-0', 0.3, 0, { taskLoss: 0.2 }),
      pt('0-1-2', 0.2, 1, { taskLoss: 0.01 }),
      pt('0-1-3', 0.9, 2, { taskLoss: 0.05 }),
    ];
    points.push(pt('0-0-4', 1, 4, { taskLoss: 0 }));
    expect(bothFrontiers(points).map((p) => patternKey(p.pattern))).toEqual(['0-0-0', '0-1-2', '0-1-3', '0-0-4']);
    expect(paretoFrontier(points).map((p) => patternKey(p.pattern))).toEqual(['0-0-0', '0-1-3', '0-0-4']);
  });

  it('quality loss per metric', () => {
    expect(qualityLoss(pt('0-0-0', 0.75, 0, { taskLoss: 0.1 }))).toBe(0.25);
    expect(qualityLoss(pt('0-0-0', 0.75, 0, { taskLoss: 0.1 }), 'task')).toBe(0.1);
    expect(qualityLoss(pt('0-0-0', 0.75, 0), 'task')).toBe(Infinity);
  });
});

describe(profiledPattern.name, () => {
  const wire = { quality: 0.9, meanKl: 0.1, recomputedLayers: 2, eCacheBytesPerToken: 8, prefillMs: 3 };
  it.each<[string, Parameters<typeof profiledPattern>[0], ProfiledPattern]>([
    [
      'copies every field',
      { ...wire, pattern: { r1: 1, u1: 2, r2: 3 }, taskLoss: 0.2 },
      { ...wire, pattern: { r1: 1, u1: 2, r2: 3 }, taskLoss: 0.2 },
    ],
    ['a missing pattern reads as all zeros', wire, { ...wire, pattern: { r1: 0, u1: 0, r2: 0 } }],
    [
      'a null taskLoss is not measured',
      { ...wire, pattern: { r1: 0, u1: 1, r2: 2 }, taskLoss: null },
      { ...wire, pattern: { r1: 0, u1: 1, r2: 2 } },
    ],
  ])('%s', (_name, fields, want) => {
    expect(profiledPattern(fields)).toStrictEqual(want);
  });
});
