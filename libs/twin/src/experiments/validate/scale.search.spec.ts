import { searchScale } from './scale.search.js';

const o = { tolerance: 0.03, maxIterations: 10, min: 0.1, max: 10 };

describe(searchScale.name, () => {
  it.each([
    ['proportional: found in one step', (s: number) => 2 * s, 6, 3],
    ['with a part the scale does not move', (s: number) => 1 + s, 4, 3],
    ['a floor under the target: bracketing then halving', (s: number) => Math.max(1, s * s), 5, Math.sqrt(5)],
  ])('%s', (_name, measure, target, scale) => {
    const r = searchScale(target, measure, o);
    expect(r.converged).toBe(true);
    expect(r.value / target).toBeGreaterThan(0.97);
    expect(r.value / target).toBeLessThan(1.03);
    expect(r.scale).toBeCloseTo(scale, 0);
  });

  it('keeps the closest scale tried when the measure is not monotone, and says it did not converge', () => {
    // Jumps over the target: 1 → 2 or more, never in between.
    const r = searchScale(1.5, (s) => (s < 1.2 ? 1 : 2), o);
    expect(r.converged).toBe(false);
    expect(r.iterations).toBe(10);
    expect([1, 2]).toContain(r.value);
  });

  it('stops at the first replay that measures nothing', () => {
    const r = searchScale(5, () => 0, o);
    expect(r).toEqual({ scale: 1, value: NaN, iterations: 1, converged: false });
  });

  it('steps no further than the range', () => {
    const seen: number[] = [];
    searchScale(1e6, (s) => (seen.push(s), s), { ...o, maxIterations: 3 });
    expect(Math.max(...seen)).toBe(10);
  });
});
