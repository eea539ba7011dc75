/** A live request's KV need, keyed by the session it belongs to. */
export interface LiveDemand {
  readonly session: string;
  readonly tokens: number;
}

/**
 * A model's demand for the elastic coordinator in multi-turn serving: its live requests' KV plus
 * the KV of the sessions it served within the last `windowMs` that are not live now. Those
 * sessions come back, and their histories are what lent memory should hold; counting only live
 * requests lends too little (docs/twin.md §7, SwiftCache). A session counts what it held when it
 * was last served — never its output budget — and all of them together at most `capTokens` (what
 * the model's prefix cache may keep). `windowMs` 0 is the live-only rule.
 *
 * Sessions sit in a Map in the order they were last served (re-serving deletes and re-inserts),
 * which is also time order while the caller's clock does not go back: expiry pops from the front
 * and keeps a running total, so `served` and `demand` cost O(1) amortized plus the live requests.
 */
export class SessionDemand {
  private readonly recent = new Map<string, { readonly atMs: number; readonly tokens: number }>();
  private total = 0;
  private lastMs = Number.NEGATIVE_INFINITY;

  constructor(
    readonly windowMs: number,
    readonly capTokens: number = Number.MAX_SAFE_INTEGER,
  ) {
    if (!Number.isFinite(windowMs) || windowMs < 0) throw new RangeError(`window must be a non-negative number of ms, got ${windowMs}`);
    if (!Number.isSafeInteger(capTokens) || capTokens < 0) throw new RangeError(`cap must be a non-negative integer, got ${capTokens}`);
  }

  /** `session` finished a turn at `nowMs` holding `tokens` of KV (replaces its earlier turn). */
  served(session: string, nowMs: number, tokens: number): void {
    if (!Number.isSafeInteger(tokens) || tokens < 0) throw new RangeError(`tokens must be a non-negative integer, got ${tokens}`);
    if (nowMs < this.lastMs) throw new RangeError(`time went back: ${nowMs} after ${this.lastMs}`);
    this.lastMs = nowMs;
    if (this.windowMs === 0) return;
    this.ended(session);
    this.recent.set(session, { atMs: nowMs, tokens });
    this.total += tokens;
  }

  /** The session is over (deleted, or replaced by a fresh one): its KV is no longer demand. */
  ended(session: string): void {
    const old = this.recent.get(session);
    if (!old) return;
    this.recent.delete(session);
    this.total -= old.tokens;
  }

  /** KV of the sessions served in (now − window, now], none of `live` among them, capped. */
  recentTokens(nowMs: number, live: ReadonlySet<string> = new Set()): number {
    this.expire(nowMs);
    let n = this.total;
    for (const s of live) n -= this.recent.get(s)?.tokens ?? 0;
    return Math.min(n, this.capTokens);
  }

  /** The model's demand at `nowMs`: its live requests plus the recent sessions that are not live. */
  demand(nowMs: number, live: Iterable<LiveDemand>): number {
    let tokens = 0;
    const sessions = new Set<string>();
    for (const r of live) {
      tokens += r.tokens;
      sessions.add(r.session);
    }
    return tokens + this.recentTokens(nowMs, sessions);
  }

  /** Sessions still inside the window at `nowMs`. */
  size(nowMs: number): number {
    this.expire(nowMs);
    return this.recent.size;
  }

  private expire(nowMs: number): void {
    for (const [session, x] of this.recent) {
      if (x.atMs > nowMs - this.windowMs) break;
      this.recent.delete(session);
      this.total -= x.tokens;
    }
  }
}
