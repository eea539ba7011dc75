import { CHUNK_TOKENS, chunkKeys, heldChunkPrefix, type CandidateEstimate, type DirectoryTier, type KvDirectory } from '@mnemo/kv-core';
import type { InferenceRequest } from '@mnemo/proto';
import { BoundedRecords } from '@mnemo/service-kit';

/** What routing saw when it placed one request: the scheduler's half of `why`. */
export interface RoutingRecord {
  readonly requestId: string;
  readonly tenant: string;
  readonly model: string;
  readonly nodeId: string;
  readonly attempt: number;
  readonly promptTokens: number;
  readonly chunkKeys: readonly string[];
  readonly atUnixMs: number;
  /** Why routing chose the node, its estimate there and every candidate's (absent in records from older replicas). */
  readonly route?: RouteExplanation;
  /** Per whole chunk: other nodes holding it, other models' copies, another tenant's copy held. */
  readonly chunks: ReadonlyArray<{
    heldBy: Array<{ nodeId: string; tiers: DirectoryTier[] }>;
    otherModels: string[];
    otherTenantHeld: boolean;
  }>;
}

/** What routing weighed for one request. */
export interface RouteExplanation {
  readonly reason: string;
  readonly estimateMs: number;
  readonly candidates: readonly CandidateEstimate[];
}

/** Salt of the tenant-free chain: no tenant id has a NUL byte, so it names no tenant's keys. */
const CONTENT_SALT = '\u0000content';

/**
 * Routing records (bounded by count and age) and a content index: for each prompt chunk seen
 * recently, keyed by a tenant-free chain of the same tokens, which tenants sent it and under
 * which (salted) key. The index is what lets an admin learn that a miss was tenant isolation —
 * and why that answer needs an admin key: it says another tenant sent the same prompt.
 *
 * Cost on the request path: one more hash pass over the prompt (the tenant-free chain), the
 * directory lookups of its keys, and for every other model a node serves, one chunk hashed
 * (the chain under that model stops at its first chunk nobody holds).
 */
export class RoutingRecords {
  readonly records: BoundedRecords<string, RoutingRecord>;
  /** Told of every record this replica makes (WhyRecordShare sends it to the other replicas). */
  onRecord: (r: RoutingRecord) => void = () => undefined;
  /** Per node: prompt tokens routed there, and how many it held in each tier when routed (since start). */
  readonly routedTo = new Map<string, { prompt: number; device: number; host: number; ssd: number }>();
  private readonly content: BoundedRecords<string, Map<string, string>>;

  constructor(maxRecords: number, ttlMs: number, maxContentKeys: number, now: () => number = Date.now) {
    this.records = new BoundedRecords(maxRecords, ttlMs, now);
    this.content = new BoundedRecords(maxContentKeys, ttlMs, now);
  }

  routed(
    request: InferenceRequest,
    nodeId: string,
    attempt: number,
    directory: KvDirectory,
    servedModels: readonly string[],
    atUnixMs: number,
    route?: RouteExplanation,
  ): void {
    const keys = request.chunkKeys;
    const plain = chunkKeys(request.model, CONTENT_SALT, request.tokens);
    const others = servedModels
      .filter((m) => m !== request.model)
      .map((m) => ({
        model: m,
        held: heldChunkPrefix(m, request.tenant, request.tokens, (k) => directory.holdings(k).length > 0, keys.length),
      }));
    const stats = this.routedTo.get(nodeId) ?? { prompt: 0, device: 0, host: 0, ssd: 0 };
    this.routedTo.set(nodeId, stats);
    stats.prompt += request.tokens.length;
    const chunks = keys.map((key, c) => {
      const holding = directory.holdings(key);
      for (const t of holding.find((h) => h.nodeId === nodeId)?.tiers ?? []) stats[t] += CHUNK_TOKENS;
      const tenants = this.content.get(plain[c]!) ?? new Map<string, string>();
      const otherTenantHeld = [...tenants].some(([t, k]) => t !== request.tenant && directory.holdings(k).length > 0);
      tenants.set(request.tenant, key);
      this.content.set(plain[c]!, tenants);
      return {
        heldBy: holding.filter((h) => h.nodeId !== nodeId),
        otherModels: others.filter((o) => o.held > c).map((o) => o.model),
        otherTenantHeld,
      };
    });
    const record: RoutingRecord = {
      requestId: request.requestId,
      tenant: request.tenant,
      model: request.model,
      nodeId,
      attempt,
      promptTokens: request.tokens.length,
      chunkKeys: [...keys],
      atUnixMs,
      ...(route ? { route } : {}),
      chunks,
    };
    this.adopt(record);
    this.onRecord(record);
  }

  /**
   * Keeps `r` unless a newer record of its request is held: the later attempt (a failover routes
   * again, maybe on another replica), then the later routing. Every replica adopts every record,
   * so all keep the same one whatever order they arrive in.
   */
  adopt(r: RoutingRecord): boolean {
    const had = this.records.get(r.requestId);
    if (had && newer(had, r)) return false;
    this.records.set(r.requestId, r);
    return true;
  }
}

/** `a` wins over `b`: a later attempt, then a later routing, then (a tie, for one order everywhere) the greater node id. */
function newer(a: RoutingRecord, b: RoutingRecord): boolean {
  if (a.attempt !== b.attempt) return a.attempt > b.attempt;
  if (a.atUnixMs !== b.atUnixMs) return a.atUnixMs > b.atUnixMs;
  return a.nodeId > b.nodeId;
}
