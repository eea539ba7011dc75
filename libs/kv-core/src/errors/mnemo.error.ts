import { DomainError } from './domain.error.js';
import { ErrorCode } from './error-code.enum.js';

/** The one concrete domain error of Mnemo; everything that crosses a service boundary is one of these. */
export class MnemoError extends DomainError<ErrorCode> {
  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>) {
    super(code, message, details);
  }
}

const codes: ReadonlySet<string> = new Set(Object.values(ErrorCode));

/**
 * True for MnemoError instances and for structurally identical objects (e.g. an error rebuilt
 * from a NATS reply in another realm or module copy), so `instanceof` brittleness does not leak.
 */
export function isMnemoError(e: unknown): e is MnemoError {
  if (e instanceof MnemoError) return true;
  if (!(e instanceof Error) || e.name !== MnemoError.name) return false;
  const code: unknown = (e as Error & { code?: unknown }).code;
  return typeof code === 'string' && codes.has(code);
}
