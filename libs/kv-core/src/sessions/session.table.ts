/** What the scheduler remembers of one session: where its last request ran and what it holds. */
export interface SessionRecord {
  readonly tenant: string;
  readonly sessionId: string;
  readonly model: string;
  /** Node that ran the session's last request (its KV is there, at least on some tier). */
  readonly nodeId: string;
  /** Chunk keys of the last request's prompt: what an advisory asks a node to prefetch. */
  readonly chunkKeys: readonly string[];
  /**
   * Tokens whose KV the last request left: its prompt's length, then, once the node reports
   * the request's end ({@link SessionTable.extend}), prompt and reply (routing prices the part
   * past its whole chunks).
   */
  readonly promptTokens?: number;
  /** Key of the partial chunk past `chunkKeys` that the node keeps (set by {@link SessionTable.extend}). */
  readonly partialKey?: string;
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
    if (!Number.isInteger(maxSessions) || maxSessions < 1)
      throw new RangeError(`maxSessions must be a positive integer, got ${maxSessions}`);
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

  /**
   * The node that ran the session's last request reports the KV it left: whole chunks of
   * prompt and reply, and the partial chunk past them. Applied only when it extends what is
   * known — same node and model, at least the recorded tokens, the recorded keys as its prefix —
   * so a report that arrives after the session's next request went elsewhere changes nothing.
   * Keeps the session's place in the LRU order (a report is not a use). Returns whether it applied.
   */
  extend(tail: {
    tenant: string;
    sessionId: string;
    nodeId: string;
    model: string;
    chunkKeys: readonly string[];
    partialKey?: string;
    tokens: number;
  }): boolean {
    const k = key(tail.tenant, tail.sessionId);
    const rec = this.map.get(k);
    if (!rec || rec.nodeId !== tail.nodeId || rec.model !== tail.model) return false;
    if (tail.tokens < (rec.promptTokens ?? 0) || tail.chunkKeys.length < rec.chunkKeys.length) return false;
    if (rec.chunkKeys.some((c, i) => tail.chunkKeys[i] !== c)) return false;
    const { partialKey: _old, ...kept } = rec;
    // Map.set on a present key keeps its position.
    this.map.set(k, {
      ...kept,
      chunkKeys: [...tail.chunkKeys],
      promptTokens: tail.tokens,
      ...(tail.partialKey ? { partialKey: tail.partialKey } : {}),
    });
    return true;
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
