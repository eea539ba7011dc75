import { ErrorCode } from '../errors/error-code.enum.js';
import { planReuse, recomputeAll, validateReusePattern, type LayerAction } from './reuse.pattern.js';

const c: LayerAction = 'compute';
const s: LayerAction = 'reuse-skip';
const q: LayerAction = 'reuse-query';

describe(planReuse.name, () => {
  const cases: Array<[string, [number, number, number], number, LayerAction[], number | null, number]> = [
    ['recompute everything', [0, 0, 4], 4, [c, c, c, c], null, 4],
    ['reuse a middle band, restart from E at u1', [1, 2, 3], 4, [c, s, c, q], 2, 2],
    ['reuse the bottom, recompute the top', [0, 1, 3], 3, [s, c, c], 1, 2],
    ['reuse the top only (no restart)', [2, 4, 4], 4, [c, c, q, q], null, 2],
    ['reuse everything', [0, 0, 0], 3, [q, q, q], null, 0],
    ['reuse band then reuse to the end', [1, 3, 4], 4, [c, s, s, c], 3, 2],
  ];
  it.each(cases)('%s', (_name, [r1, u1, r2], layers, actions, eLayer, recomputed) => {
    const sut = planReuse({ r1, u1, r2 }, layers);
    expect(sut).toEqual({ actions, eLayer, recomputed });
  });

  it('recomputeAll is the identity pattern', () => {
    expect(planReuse(recomputeAll(5), 5).recomputed).toBe(5);
  });
});

describe(validateReusePattern.name, () => {
  const bad: Array<[string, [number, number, number], number]> = [
    ['r1 after u1', [2, 1, 3], 4],
    ['u1 after r2', [0, 3, 2], 4],
    ['r2 past the last layer', [0, 0, 5], 4],
    ['negative', [-1, 0, 4], 4],
    ['not an integer', [0.5, 1, 4], 4],
  ];
  it.each(bad)('%s → invalid_request', (_name, [r1, u1, r2], layers) => {
    expect(() => validateReusePattern({ r1, u1, r2 }, layers)).toThrow(expect.objectContaining({ code: ErrorCode.InvalidRequest }));
  });
});
