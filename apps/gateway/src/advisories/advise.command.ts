import type { Body } from '../completions/request-field.validators.js';
import { invalid, optionalBoolean, optionalInt, optionalNumber, requiredString } from '../completions/request-field.validators.js';

/** POST /v1/advisories (or gRPC Advise), validated. */
export interface AdviseCommand {
  readonly tenant: string;
  readonly sessionId: string;
  readonly model: string;
  /** Unix ms; 0 = soon. */
  readonly expectedArrivalUnixMs: number;
  readonly ordered: boolean;
  readonly priority: number;
}

/** Checks the REST body: `{session_id, model, expected_arrival? (unix ms), ordered?, priority?}`. */
export function parseAdviseBody(body: Body, tenant: string): AdviseCommand {
  const sessionId = requiredString(body, 'session_id');
  if (sessionId.length > 256) throw invalid('session_id', "'session_id' must be at most 256 characters");
  return {
    tenant,
    sessionId,
    model: requiredString(body, 'model'),
    expectedArrivalUnixMs: optionalNumber(body, 'expected_arrival', 0, 8.64e15) ?? 0,
    ordered: optionalBoolean(body, 'ordered') ?? false,
    priority: optionalInt(body, 'priority', -1000, 1000) ?? 0,
  };
}
