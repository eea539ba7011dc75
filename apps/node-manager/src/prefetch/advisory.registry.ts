import { Injectable } from '@nestjs/common';

/** What the node keeps of a live advisory: enough to judge it when its request comes (kv-core judgeAdvisoryArrival). */
export interface HeldAdvisory {
  readonly id: string;
  readonly sessionId: string;
  readonly model: string;
  readonly expiresAtMs: number;
  /** Chunks the advisory had this node pull. */
  readonly queued: number;
}

/** The advisories a node holds prefetched KV for, by id and by session (ForgetRequest may name either). */
@Injectable()
export class AdvisoryRegistry {
  private readonly byId = new Map<string, HeldAdvisory>();
  private readonly bySession = new Map<string, Set<string>>();

  get size(): number {
    return this.byId.size;
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  add(a: HeldAdvisory): void {
    this.remove(a.id);
    this.byId.set(a.id, a);
    if (a.sessionId) this.bySession.set(a.sessionId, (this.bySession.get(a.sessionId) ?? new Set()).add(a.id));
  }

  /**
   * A request of the session arrived: its live advisories for that model, removed here (each is
   * judged once; what they pulled stays in the store until the request adopts it or they expire).
   */
  arrived(sessionId: string, model: string, nowMs: number): HeldAdvisory[] {
    if (!sessionId) return [];
    this.expire(nowMs);
    const out: HeldAdvisory[] = [];
    for (const id of this.bySession.get(sessionId) ?? []) {
      const a = this.byId.get(id);
      if (a && a.model === model) out.push(a);
    }
    for (const a of out) this.remove(a.id);
    return out;
  }

  /** Ids to forget for (advisoryId, sessionId): the one named, or all of the session; removed here. */
  take(advisoryId: string, sessionId: string): string[] {
    const ids = advisoryId ? [advisoryId] : [...(this.bySession.get(sessionId) ?? [])];
    for (const id of ids) this.remove(id);
    return ids;
  }

  /** Drops advisories past their expiry (the store drops their chunks on its own sweep). */
  expire(nowMs: number): void {
    for (const [id, a] of this.byId) if (a.expiresAtMs <= nowMs) this.remove(id);
  }

  private remove(id: string): void {
    const a = this.byId.get(id);
    if (!a) return;
    this.byId.delete(id);
    const s = this.bySession.get(a.sessionId);
    s?.delete(id);
    if (s?.size === 0) this.bySession.delete(a.sessionId);
  }
}
