import type { Reservation } from '@mnemo/kv-core';

/** A reservation as the wire's AdvisoryInfo. */
export function advisoryInfo(r: Reservation): { advisoryId: string; nodeId: string; expiresUnixMs: number; sessionId: string } {
  return { advisoryId: r.id, nodeId: r.nodeId, expiresUnixMs: r.expiresAtMs, sessionId: r.sessionId };
}
