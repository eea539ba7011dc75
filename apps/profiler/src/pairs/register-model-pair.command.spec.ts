import { ErrorCode } from '@mnemo/kv-core';
import { RegisterModelPairCommand } from './register-model-pair.command.js';

describe(RegisterModelPairCommand.name, () => {
  it('accepts two different ids', () => {
    expect(RegisterModelPairCommand.from({ base: 'a', derived: 'b' })).toMatchObject({ base: 'a', derived: 'b' });
  });

  it.each([
    ['no base', '', 'b'],
    ['no derived', 'a', ''],
    ['neither', '', ''],
    ['the same model twice', 'a', 'a'],
  ])('rejects %s with invalid_request', (_name, base, derived) => {
    expect(() => RegisterModelPairCommand.from({ base, derived })).toThrow(expect.objectContaining({ code: ErrorCode.InvalidRequest }));
  });
});
