import { Injectable } from '@nestjs/common';

/** The advisories a node holds prefetched KV for, by id and by session (ForgetRequest may name either). */
@Injectable()
export class AdvisoryRegistry {
  private readonly byId = new Map<string, { sessionId: string; expiresAtMs: number }>();
  private readonly bySession = new Map<string, Set<string>>();

  get size(): number {
    return this.byId.size;
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  add(id: string, sessionId: string, expiresAtMs: number): void {
    this.remove(id);
    this.byId.set(id, { sessionId, expiresAtMs });
    if (sessionId) this.bySession.set(sessionId, (this.bySession.get(sessionId) ?? new Set()).add(id));
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
