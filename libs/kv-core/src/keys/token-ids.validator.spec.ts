import { ErrorCode } from '../errors/error-code.enum.js';
import { validateTokenIds } from './token-ids.validator.js';

describe(validateTokenIds.name, () => {
  it.each([
    ['empty', []],
    ['zero and the largest u32', [0, 4294967295]],
    ['a Uint32Array', Uint32Array.from([1, 2, 3])],
  ])('accepts %s', (_name, tokens) => {
    expect(() => validateTokenIds(tokens)).not.toThrow();
  });

  it.each([
    ['negative', [0, -1], 1],
    ['2^32', [2 ** 32], 0],
    ['fraction', [1, 2, 0.5], 2],
    ['NaN', [NaN], 0],
    ['Infinity', [Infinity], 0],
    ['a string inside', [1, '2' as unknown as number], 1],
  ])('rejects %s with invalid_request and the bad index', (_name, tokens, index) => {
    expect(() => validateTokenIds(tokens)).toThrow(
      expect.objectContaining({ code: ErrorCode.InvalidRequest, details: expect.objectContaining({ index }) }),
    );
  });

  it('rejects a non-array', () => {
    expect(() => validateTokenIds('abc' as unknown as number[])).toThrow(expect.objectContaining({ code: ErrorCode.InvalidRequest }));
  });
});
