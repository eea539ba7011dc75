import { recomputedLayers, reusesNothing, withoutTransition } from './cross-model.rule.js';
import type { ReusePattern } from './reuse.pattern.js';

const L = 6;
const p = (r1: number, u1: number, r2: number): ReusePattern => ({ r1, u1, r2 });

describe(withoutTransition.name, () => {
  it.each<[string, ReusePattern, ReusePattern]>([
    ['reuse → recompute → reuse widens down to layer 0', p(0, 2, 4), p(0, 0, 4)],
    ['recompute → reuse → recompute → reuse widens too', p(1, 3, 5), p(0, 0, 5)],
    ['recompute then reuse to the top has no transition: kept', p(2, 2, 4), p(2, 2, 4)],
    ['a bottom recompute with the rest reused as queries: kept', p(2, L, L), p(2, L, L)],
    ['full reuse: kept', p(0, 0, 0), p(0, 0, 0)],
    ['full prefill: kept', p(0, 0, L), p(0, 0, L)],
    ['a band reaching the top widens to a full prefill', p(0, 3, L), p(0, 0, L)],
  ])('%s', (_, input, want) => {
    expect(withoutTransition(input, L)).toEqual(want);
  });

  it('rejects an invalid pattern', () => {
    expect(() => withoutTransition(p(3, 1, 2), L)).toThrow();
  });
});

describe(recomputedLayers.name, () => {
  it.each<[ReusePattern, number[]]>([
    [p(0, 0, 4), [0, 1, 2, 3]],
    [p(1, 3, 5), [0, 3, 4]],
    [p(0, 0, 0), []],
    [p(0, 0, L), [0, 1, 2, 3, 4, 5]],
  ])('%j recomputes %j', (input, want) => {
    expect(recomputedLayers(input, L)).toEqual(want);
  });
});

describe(reusesNothing.name, () => {
  it.each<[ReusePattern, boolean]>([
    [p(0, 0, L), true],
    [p(2, 2, L), true],
    [p(0, 0, 4), false],
    [p(0, 0, 0), false],
  ])('%j → %s', (input, want) => {
    expect(reusesNothing(input, L)).toBe(want);
  });
});
