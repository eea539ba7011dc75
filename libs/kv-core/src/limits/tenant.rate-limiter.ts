/** A token bucket's settings: `ratePerSec` tokens refill each second, up to `burst` held. */
export interface RateLimit {
  readonly ratePerSec: number;
  readonly burst: number;
}

/** What one attempt got: allowed, or how long until a token is there. */
export type RateDecision = { readonly ok: true } | { readonly ok: false; readonly retryAfterMs: number };

interface Bucket {
  tokens: number;
  atMs: number;
}

/**
 * Per-tenant token buckets (one tenant's flood cannot use up another's share). Each bucket holds
 * at most `burst` tokens and refills continuously at `ratePerSec`; an attempt takes one token or
 * is refused with the wait until one is there. Refill is computed lazily from the clock passed
 * in, so the limiter does no I/O and keeps no timers.
 *
 * Bounded: at most `maxTenants` buckets. A full bucket carries no state (a tenant seen anew
 * starts full too), so when the map is full it first forgets full buckets; if none is full it
 * forgets the least recently used — that tenant may get up to one extra burst, never more.
 * Map insertion order is the recency order (a touched bucket is re-inserted), so that is O(1).
 */
export class TenantRateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    readonly limit: RateLimit,
    private readonly maxTenants = 10_000,
  ) {
    if (!(limit.ratePerSec > 0) || !Number.isFinite(limit.ratePerSec))
      throw new RangeError(`rate must be a positive number of tokens per second, got ${limit.ratePerSec}`);
    if (!Number.isInteger(limit.burst) || limit.burst < 1) throw new RangeError(`burst must be an integer ≥ 1, got ${limit.burst}`);
    if (!Number.isInteger(maxTenants) || maxTenants < 1) throw new RangeError(`maxTenants must be an integer ≥ 1, got ${maxTenants}`);
  }

  /** Buckets held now (for tests and metrics). */
  get tenants(): number {
    return this.buckets.size;
  }

  /** Takes one token of `tenant`'s bucket at `nowMs`, or says how long to wait for one. */
  take(tenant: string, nowMs: number): RateDecision {
    const b = this.refilled(tenant, nowMs);
    this.buckets.delete(tenant);
    this.buckets.set(tenant, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return { ok: true };
    }
    return { ok: false, retryAfterMs: Math.ceil(((1 - b.tokens) * 1000) / this.limit.ratePerSec) };
  }

  private refilled(tenant: string, nowMs: number): Bucket {
    const b = this.buckets.get(tenant);
    if (!b) {
      if (this.buckets.size >= this.maxTenants) this.makeRoom(nowMs);
      return { tokens: this.limit.burst, atMs: nowMs };
    }
    // A clock that steps back refills nothing (never a negative refill, never a free burst).
    const elapsed = Math.max(0, nowMs - b.atMs);
    b.tokens = Math.min(this.limit.burst, b.tokens + (elapsed * this.limit.ratePerSec) / 1000);
    b.atMs = Math.max(b.atMs, nowMs);
    return b;
  }

  private makeRoom(nowMs: number): void {
    for (const [t, b] of this.buckets) {
      if (b.tokens + (Math.max(0, nowMs - b.atMs) * this.limit.ratePerSec) / 1000 >= this.limit.burst) this.buckets.delete(t);
    }
    if (this.buckets.size >= this.maxTenants) this.buckets.delete(this.buckets.keys().next().value!);
  }
}
