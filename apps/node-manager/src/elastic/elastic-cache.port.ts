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
   * A request of `model` that needs `blocks` KV blocks was admitted: record the demand and make
   * room now — a worker reclaims units it lent, a master borrows idle ones.
   */
  makeRoom(model: string, blocks: number): void;
}

export const NO_ELASTIC_CACHE: ElasticCachePort = { limit: () => 0, makeRoom: () => undefined };
