import { patternGrid, patternKey } from './pattern.grid.js';
import { planReuse } from './reuse.pattern.js';

describe(patternGrid.name, () => {
  const sizes: Array<[number, number]> = [
    // layers → patterns. 1: 0-0-0, 0-0-1. 2: 0-0-{0,1,2}, 0-1-2. 6 pins the rules at scale.
    [1, 2],
    [2, 4],
    [6, 42],
  ];
  it.each(sizes)('%i layers → %i distinct patterns', (layers, count) => {
    const sut = patternGrid(layers);
    expect(sut).toHaveLength(count);
    expect(new Set(sut.map(patternKey)).size).toBe(count);
  });

  it('every pattern is valid, and no two compute the same per-layer plan', () => {
    const sut = patternGrid(5);
    const plans = sut.map((p) => JSON.stringify(planReuse(p, 5)));
    expect(new Set(plans).size).toBe(sut.length);
  });

  it('holds recompute-everything, reuse-everything and the reuse→recompute→reuse band', () => {
    const keys = patternGrid(6).map(patternKey);
    expect(keys).toEqual(expect.arrayContaining(['0-0-6', '0-0-0', '0-2-4', '1-2-4']));
    expect(keys).not.toContain('2-2-4'); // same as 0-0-4
    expect(keys).not.toContain('0-3-3'); // E cache loaded for nothing
    expect(keys).not.toContain('2-6-6'); // same as 0-0-2
  });

  it.each([0, -1, 1.5])('rejects %p layers', (layers) => {
    expect(() => patternGrid(layers)).toThrow(RangeError);
  });
});
