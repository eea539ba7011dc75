import { ErrorCode, MnemoError } from '@mnemo/kv-core';
import type { RegisterModelPairRequest } from '@mnemo/proto';

/** A validated RegisterModelPairRequest: both ids set and different. */
export class RegisterModelPairCommand {
  private constructor(
    readonly base: string,
    readonly derived: string,
  ) {}

  static from(req: Pick<RegisterModelPairRequest, 'base' | 'derived'>): RegisterModelPairCommand {
    const problems: string[] = [];
    if (req.base === '') problems.push('base is required');
    if (req.derived === '') problems.push('derived is required');
    if (req.base !== '' && req.base === req.derived) problems.push('base and derived must be different models');
    if (problems.length > 0) throw new MnemoError(ErrorCode.InvalidRequest, problems.join('; '), { problems });
    return new RegisterModelPairCommand(req.base, req.derived);
  }
}
