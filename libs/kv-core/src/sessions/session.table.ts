/** What the scheduler remembers of one session: where its last request ran and what it holds. */
export interface SessionRecord {
  readonly tenant: string;
  readonly sessionId: string;
  readonly model: string;
  /** Node that ran the session's last request (its KV is there, at least on some tier). */
  readonly nodeId: string;
  /** Chunk keys of the last request's prompt: what an advisory asks a node to prefetch. */
  readonly chunkKeys: readonly string[];
  /** Prompt length of the last request in tokens (routing prices the part past its whole chunks). */
  readonly promptTokens?: number;
  readonly requests: number;
  readonly lastUsedMs: number;
}

/**
 * Sessions the scheduler has seen, keyed by (tenant, session id) so tenants cannot see or
 * touch each other's sessions. Bounded: past `maxSessions` the least recently used session is
 * forgotten (it only loses its routing hints; its KV stays wherever it is).
 * Invariant: `map` iterates oldest use first (a record re-inserts), so evict and touch are O(1).
 */
export class SessionTable {
  private readonly map = new Map<string, SessionRecord>();
  private evicted = 0;

  constructor(readonly maxSessions: number) {
    if (!Number.isInteger(maxSessions) || maxSessions < 1) throw new RangeError(`maxSessions must be a positive integer, got ${maxSessions}`);
  }

  /** A request of the session ran on `nodeId`. */
  record(r: Omit<SessionRecord, 'requests'>): SessionRecord {
    const k = key(r.tenant, r.sessionId);
    const before = this.map.get(k);
    this.map.delete(k);
    const rec: SessionRecord = { ...r, requests: (before?.requests ?? 0) + 1 };
    this.map.set(k, rec);
    while (this.map.size > this.maxSessions) {
      this.map.delete(this.map.keys().next().value!);
      this.evicted++;
    }
    return rec;
  }

  get(tenant: string, sessionId: string): SessionRecord | undefined {
    return this.map.get(key(tenant, sessionId));
  }

  delete(tenant: string, sessionId: string): SessionRecord | undefined {
    const k = key(tenant, sessionId);
    const rec = this.map.get(k);
    this.map.delete(k);
    return rec;
  }

  get size(): number {
    return this.map.size;
  }

  get evictions(): number {
    return this.evicted;
  }
}

/** NUL cannot appear in either part (ids are validated), so the key is unambiguous. */
function key(tenant: string, sessionId: string): string {
  return `${tenant}\u0000${sessionId}`;
}
