/**
 * Prefill work the scheduler sent each node that the node has not worked through yet, in ms of
 * its prefill time. A node's heartbeat counts its queue in requests, and only once a second; a
 * request that must prefill 2,000 tokens blocks the node's next passes for the whole of that
 * prefill, not for one typical request. The scheduler adds each dispatch's estimated prefill
 * here, and the backlog drains in real time — a node prefills one ms of work per ms — so a node
 * that just took a long prefill looks busy for about as long as it is, without a report from it.
 */
export class PrefillBacklog {
  private readonly nodes = new Map<string, { ms: number; atMs: number }>();

  /** Adds `ms` of prefill work sent to `nodeId` at `nowMs`. */
  add(nodeId: string, ms: number, nowMs: number): void {
    if (!Number.isFinite(ms) || ms <= 0) return;
    this.nodes.set(nodeId, { ms: this.get(nodeId, nowMs) + ms, atMs: nowMs });
  }

  /** Work left at `nowMs` (now, or a time ahead such as a request's expected arrival), in ms; 0 for a node nothing was sent to. */
  get(nodeId: string, nowMs: number): number {
    const b = this.nodes.get(nodeId);
    if (!b) return 0;
    return Math.max(0, b.ms - Math.max(0, nowMs - b.atMs));
  }

  /**
   * Takes back `ms` added for a dispatch the node did not take (refused, unanswered, failed to
   * send): the work was never sent, so the node must not look busy with it. Never below 0.
   */
  take(nodeId: string, ms: number, nowMs: number): void {
    if (!Number.isFinite(ms) || ms <= 0 || !this.nodes.has(nodeId)) return;
    const left = this.get(nodeId, nowMs) - ms;
    if (left > 0) this.nodes.set(nodeId, { ms: left, atMs: nowMs });
    else this.nodes.delete(nodeId);
  }

  /** Forgets a node (it left, or restarted with an empty queue). */
  drop(nodeId: string): void {
    this.nodes.delete(nodeId);
  }
}
