import { OrderedSet } from '../pool/ordered.set.js';

/** An advisory's reservation: the session's next request goes to `nodeId` until `expiresAtMs`. */
export interface Reservation {
  readonly id: string;
  readonly tenant: string;
  readonly sessionId: string;
  readonly model: string;
  readonly nodeId: string;
  /** When the request is expected (the advisory's expected arrival, or when it was made). */
  readonly expectedAtMs: number;
  readonly expiresAtMs: number;
  readonly priority: number;
}

export interface ReservationLimits {
  /** Live reservations one tenant may hold: a flood of spurious advisories stops here. */
  readonly perTenant: number;
  /** Live reservations in all: the book's memory bound. */
  readonly total: number;
}

/** Why a reservation was not taken (a result, not an exception: floods are expected input). */
export type ReserveRefusal = 'tenant_limit' | 'full';

/** What a lookup by id found. */
export type ReservationLookup =
  | { readonly kind: 'live'; readonly reservation: Reservation }
  | { readonly kind: 'expired'; readonly expiredAtMs: number }
  | { readonly kind: 'unknown' };

/**
 * Advisory reservations with a TTL (Symphony §3.3). A reservation counts as coming load on its
 * node (`onNode`) only until `overdueMs` past its expected arrival: a request that late is
 * probably not coming (a spurious advisory, §3.6), and phantom load must not steer real
 * requests; the reservation itself is still honoured until it expires. At most one per (tenant, session): a new
 * advisory for the session replaces the old one, so re-announcing is never a flood. Limits per
 * tenant and in total bound memory and keep one tenant's spurious advisories from weighing on
 * everyone's routing. Expired ids are remembered (up to `total` of them) so a late invalidation
 * gets "expired", not "unknown".
 * Invariants: `byId` holds exactly the values of `bySession`; `perTenant` counts them per tenant.
 */
export class ReservationBook {
  private readonly byId = new Map<string, Reservation>();
  private readonly bySession = new Map<string, Reservation>();
  private readonly perTenant = new Map<string, number>();
  private readonly perNode = new Map<string, number>();
  /** id → expiry, oldest first, bounded by limits.total. */
  private readonly expired = new Map<string, number>();
  /** Reservations counted in `perNode`, by expected arrival (then id): the overdue ones leave from the front. */
  private expiries = 0;
  private readonly counting = new OrderedSet<Reservation>(
    (a, b) => a.expectedAtMs - b.expectedAtMs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );

  constructor(
    readonly limits: ReservationLimits,
    readonly overdueMs = 5000,
  ) {
    if (!(overdueMs >= 0)) throw new RangeError(`overdueMs must be ≥ 0, got ${overdueMs}`);
    for (const [k, v] of Object.entries(limits))
      if (!Number.isInteger(v) || v < 1) throw new RangeError(`reservation limit ${k} must be a positive integer, got ${v}`);
  }

  /** Takes the reservation (replacing the session's previous one, which is returned) or says why not. */
  reserve(r: Reservation, nowMs: number): { ok: true; replaced?: Reservation } | { ok: false; refusal: ReserveRefusal } {
    this.sweep(nowMs);
    const previous = this.bySession.get(sessionKey(r.tenant, r.sessionId));
    const tenantCount = (this.perTenant.get(r.tenant) ?? 0) - (previous ? 1 : 0);
    if (tenantCount >= this.limits.perTenant) return { ok: false, refusal: 'tenant_limit' };
    if (!previous && this.byId.size >= this.limits.total) return { ok: false, refusal: 'full' };
    if (previous) this.drop(previous);
    this.byId.set(r.id, r);
    this.bySession.set(sessionKey(r.tenant, r.sessionId), r);
    bump(this.perTenant, r.tenant, 1);
    this.counting.insert(r);
    bump(this.perNode, r.nodeId, 1);
    this.settle(nowMs);
    return previous ? { ok: true, replaced: previous } : { ok: true };
  }

  /** A tenant's reservation by id (another tenant's id reads as unknown). */
  lookup(tenant: string, id: string, nowMs: number): ReservationLookup {
    this.sweep(nowMs);
    const r = this.byId.get(id);
    if (r && r.tenant === tenant) return { kind: 'live', reservation: r };
    const at = this.expired.get(`${tenant}\u0000${id}`);
    return at === undefined ? { kind: 'unknown' } : { kind: 'expired', expiredAtMs: at };
  }

  /** The session's live reservation, if any. */
  forSession(tenant: string, sessionId: string, nowMs: number): Reservation | undefined {
    this.sweep(nowMs);
    return this.bySession.get(sessionKey(tenant, sessionId));
  }

  /** Removes a live reservation (invalidated, consumed by its request, or its session deleted). */
  release(id: string): Reservation | undefined {
    const r = this.byId.get(id);
    if (r) this.drop(r);
    return r;
  }

  /** Live reservations on a node whose request is not overdue (routing weighs them as coming load). */
  onNode(nodeId: string, nowMs: number): number {
    this.settle(nowMs);
    return this.perNode.get(nodeId) ?? 0;
  }

  get size(): number {
    return this.byId.size;
  }

  /**
   * Reservations that expired unreleased since the book was made: no request of their session
   * came (one that came, wherever it ran, releases its reservation), so each is a spurious advisory.
   */
  get expiredTotal(): number {
    return this.expiries;
  }

  /** Drops every reservation whose time passed; returns them. O(live) — the book is small by its limits. */
  sweep(nowMs: number): Reservation[] {
    const gone: Reservation[] = [];
    for (const r of this.byId.values()) if (r.expiresAtMs <= nowMs) gone.push(r);
    this.expiries += gone.length;
    for (const r of gone) {
      this.drop(r);
      this.expired.set(`${r.tenant}\u0000${r.id}`, r.expiresAtMs);
      if (this.expired.size > this.limits.total) this.expired.delete(this.expired.keys().next().value!);
    }
    return gone;
  }

  private drop(r: Reservation): void {
    this.byId.delete(r.id);
    this.bySession.delete(sessionKey(r.tenant, r.sessionId));
    bump(this.perTenant, r.tenant, -1);
    if (this.counting.delete(r)) bump(this.perNode, r.nodeId, -1);
  }

  /** Stops counting reservations whose request is overdue. O(log n) each. */
  private settle(nowMs: number): void {
    for (let r = this.counting.first(); r && r.expectedAtMs + this.overdueMs < nowMs; r = this.counting.first()) {
      this.counting.delete(r);
      bump(this.perNode, r.nodeId, -1);
    }
  }
}

function sessionKey(tenant: string, sessionId: string): string {
  return `${tenant}\u0000${sessionId}`;
}

function bump(m: Map<string, number>, k: string, d: number): void {
  const n = (m.get(k) ?? 0) + d;
  if (n <= 0) m.delete(k);
  else m.set(k, n);
}
