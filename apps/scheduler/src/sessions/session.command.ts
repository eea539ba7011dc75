import { ErrorCode, MnemoError } from '@mnemo/kv-core';

/** GET or DELETE of one session of a tenant. */
export class SessionCommand {
  constructor(
    readonly tenant: string,
    readonly sessionId: string,
  ) {}
}

/** Session ids as the gateway accepts them on requests: 1–256 characters, no control characters. */
export function validateSessionId(sessionId: string, param = 'session_id'): void {
  if (sessionId.length === 0 || sessionId.length > 256 || /[\u0000-\u001f]/.test(sessionId)) {
    throw new MnemoError(ErrorCode.InvalidRequest, `${param} must be 1–256 characters without control characters`, { param });
  }
}
