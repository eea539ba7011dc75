import { baselineCheck, baselineSummary } from './baseline.check.js';

describe('baselineCheck', () => {
  it.each<[string, number, number | null, number | null, boolean]>([
    ['a figure reproduced', 18.5, 18.5, 0, false],
    ['an overshoot carries a positive error and its cause', 3.11, 638.8, 204.402, true],
    ['a shortfall carries a negative error', 5.6, 1.2, -0.786, true],
    ['no twin figure: no error, the cause kept', 30.7, null, null, true],
    ['inside ±0.25: no cause shown', 0.43, 0.5, 0.163, false],
  ])('%s', (_n, paper, twin, error, hasCause) => {
    const c = baselineCheck(paper, twin, 'Fig. X', 'why');
    expect(c.error).toBe(error);
    expect('cause' in c).toBe(hasCause);
  });

  it('rejects a paper figure that is not positive', () => {
    expect(() => baselineCheck(0, 1, 'x')).toThrow(RangeError);
  });

  it('summarises which checks are outside ±0.25', () => {
    const s = baselineSummary({ a: baselineCheck(1, 1.2, 'a'), b: baselineCheck(1, 1.3, 'b'), c: baselineCheck(1, null, 'c') });
    expect(s).toEqual({ within: 1, total: 3, outside: ['b', 'c'] });
  });
});
