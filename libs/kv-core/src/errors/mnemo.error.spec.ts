import { DomainError } from './domain.error.js';
import { ErrorCode } from './error-code.enum.js';
import { isMnemoError, MnemoError } from './mnemo.error.js';

describe(MnemoError.name, () => {
  it('carries code, message, details and its class name', () => {
    const sut = new MnemoError(ErrorCode.PromptTooLong, 'too long', { limit: 8192 });
    expect(sut).toBeInstanceOf(Error);
    expect(sut).toBeInstanceOf(DomainError);
    expect(sut.code).toBe(ErrorCode.PromptTooLong);
    expect(sut.code).toBe('prompt_too_long');
    expect(sut.details).toEqual({ limit: 8192 });
    expect(sut.name).toBe('MnemoError');
  });

  it('omits details when none are given', () => {
    const sut = new MnemoError(ErrorCode.Internal, 'x');
    expect(sut.details).toBeUndefined();
  });
});

describe(isMnemoError.name, () => {
  const lookalike = Object.assign(new Error('from the wire'), { name: 'MnemoError', code: 'timeout' });
  const cases: Array<[string, unknown, boolean]> = [
    ['a MnemoError', new MnemoError(ErrorCode.NotFound, 'nope'), true],
    ['a structural lookalike from another module copy', lookalike, true],
    ['a plain Error', new Error('x'), false],
    ['an Error named MnemoError with an unknown code', Object.assign(new Error('x'), { name: 'MnemoError', code: 'nah' }), false],
    ['an Error with a valid code but another name', Object.assign(new Error('x'), { code: 'timeout' }), false],
    ['a plain object', { name: 'MnemoError', code: 'timeout', message: 'x' }, false],
    ['null', null, false],
    ['a string', 'internal', false],
  ];

  it.each(cases)('%s → %s', (_name, value, expected) => {
    expect(isMnemoError(value)).toBe(expected);
  });
});
