import { ErrorCode } from '../errors/error-code.enum.js';
import { MnemoError } from '../errors/mnemo.error.js';

const U32_LIMIT = 2 ** 32;

/**
 * Token ids are hashed as u32 LE, so anything outside [0, 2^32) or non-integral would be
 * silently truncated into a colliding key. Reject it at the boundary instead.
 * A Uint32Array is valid by construction and skips the scan.
 */
export function validateTokenIds(tokens: readonly number[] | Uint32Array): void {
  if (tokens instanceof Uint32Array) return;
  if (!Array.isArray(tokens)) {
    throw new MnemoError(ErrorCode.InvalidRequest, 'token ids must be an array of integers');
  }
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (typeof t !== 'number' || !Number.isInteger(t) || t < 0 || t >= U32_LIMIT) {
      throw new MnemoError(ErrorCode.InvalidRequest, `token id at index ${i} is not an integer in [0, 2^32)`, {
        index: i,
        value: typeof t === 'number' ? t : String(t),
      });
    }
  }
}
