import { paretoFrontier, type ProfiledPattern } from './pareto.frontier.js';
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
});
