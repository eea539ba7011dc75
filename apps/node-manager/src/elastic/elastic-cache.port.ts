/** Injection token of the node's elastic cache (SwiftCache §3.4–3.5). */
export const ELASTIC_CACHE = Symbol('ELASTIC_CACHE');

/**
 * What admission asks of the node's shared device budget. Without a budget (or with one model)
 * it is {@link NO_ELASTIC_CACHE}: every model keeps its fixed cache.
 */
export interface ElasticCachePort {
  /**
   * The most blocks one request of `model` can ever get: the whole budget in its block size (it
   * may wait for them), or 0 when the model is not elastic. No side effect.
   */
  limit(model: string): number;
  /**
   * A request of `model` that needs `blocks` KV blocks was admitted for `session` (see
   * {@link demandSession}): record the demand and make room now — a worker reclaims units it
   * lent, a master borrows idle ones.
   */
  makeRoom(model: string, blocks: number, session: string): void;
}

export const NO_ELASTIC_CACHE: ElasticCachePort = { limit: () => 0, makeRoom: () => undefined };

/**
 * Whose KV a request's turn leaves behind, for the elastic demand: its tenant's session, or — with
 * no session id — the request alone (a client resending its history then counts a turn twice
 * until the window passes: more lent, never less).
 */
export function demandSession(request: { readonly tenant: string; readonly sessionId: string; readonly requestId: string }): string {
  return request.sessionId ? `s\u0000${request.tenant}\u0000${request.sessionId}` : `r\u0000${request.requestId}`;
}
