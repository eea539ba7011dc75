import { Injectable } from '@nestjs/common';
import { PrefillBacklog, type NodeLoad } from '@mnemo/kv-core';

/** A model as a node describes it in its heartbeats (mnemo.v1.ModelInfo). */
export interface AdvertisedModel {
  readonly id: string;
  readonly engine: string;
  readonly maxContext: number;
  readonly vocabSize: number;
  /** "byte", "bpe" (a bundle on tokenizerSubject(tokenizerSha256)) or "" (none). */
  readonly tokenizer: string;
  readonly tokenizerSha256: string;
}

/**
 * Why a node left routing. Only a node that died — no heartbeat in time, a restart under a new
 * boot id, nobody on its infer subject — is announced down (NODE_DOWN): a goodbye drains its own
 * requests, and a dispatch timeout may be a busy node whose streams still flow.
 */
export type LeaveReason = 'goodbye' | 'timeout' | 'restarted' | 'unreachable' | 'dispatch_timeout';

export const DOWN_REASONS: ReadonlySet<LeaveReason> = new Set(['timeout', 'restarted', 'unreachable']);

/** A node entering or leaving the registry; a leave names its reason and the incarnation that left. */
export type MembershipChange =
  | { readonly kind: 'joined'; readonly nodeId: string }
  | { readonly kind: 'left'; readonly nodeId: string; readonly reason: LeaveReason; readonly bootId: string };

/** What the scheduler knows about one node, refreshed by every heartbeat. */
export interface NodeEntry extends NodeLoad {
  readonly modelInfos: readonly AdvertisedModel[];
  readonly grpcAddress: string;
  /** The incarnation its heartbeats name (Heartbeat.boot_id); "" or absent: a node that sends none. */
  readonly bootId?: string;
  /** Its SSD pools' I/O backend (Heartbeat.ssd_backend: "io_uring", "pread"); "" or absent: none reported. */
  readonly ssdBackend?: string;
}

/**
 * Soft state: the live nodes as last reported. Rebuilt from heartbeats within one period after
 * a restart, so nothing here is persisted. Each replica keeps its own copy (heartbeats are not
 * queue-grouped). Between heartbeats, dispatches bump the node's `waiting` (from the moment
 * the node is picked, not when it answers) so a burst of concurrent requests spreads out instead of piling onto the node that looked idle a
 * second ago.
 */
@Injectable()
export class NodeRegistry {
  private readonly nodes = new Map<string, NodeEntry>();
  private readonly listeners = new Set<(change: MembershipChange) => void>();
  private readonly backlog = new PrefillBacklog();

  upsert(entry: NodeEntry): boolean {
    const isNew = !this.nodes.has(entry.nodeId);
    this.nodes.set(entry.nodeId, entry);
    if (isNew) this.emit({ kind: 'joined', nodeId: entry.nodeId });
    return isNew;
  }

  remove(nodeId: string, reason: LeaveReason): boolean {
    this.backlog.drop(nodeId);
    const entry = this.nodes.get(nodeId);
    if (!entry) return false;
    this.nodes.delete(nodeId);
    this.emit({ kind: 'left', nodeId, reason, bootId: entry.bootId ?? '' });
    return true;
  }

  /** Told of every node that joins or leaves (whatever the reason); returns the unsubscribe. */
  onMembership(listener: (change: MembershipChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(change: MembershipChange): void {
    for (const l of this.listeners) l(change);
  }

  get(nodeId: string): NodeEntry | undefined {
    return this.nodes.get(nodeId);
  }

  /** Nodes sorted by id, so every caller sees one deterministic order. */
  all(): NodeEntry[] {
    return [...this.nodes.values()].sort((a, b) => (a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : 0));
  }

  /** The live nodes as routing prices them: with the costs each measured of itself, or (`measured` false) without. */
  routable(measured: boolean): NodeEntry[] {
    return measured ? this.all() : this.all().map(({ costs: _measured, ...n }) => n);
  }

  get size(): number {
    return this.nodes.size;
  }

  /** Prefill work (ms) sent to the node at `nowMs`: it looks busy for about as long (kv-core PrefillBacklog). */
  addBacklog(nodeId: string, ms: number, nowMs: number): void {
    if (this.nodes.has(nodeId)) this.backlog.add(nodeId, ms, nowMs);
  }

  /** A dispatch the node did not take: its prefill work is no longer the node's. */
  takeBacklog(nodeId: string, ms: number, nowMs: number): void {
    this.backlog.take(nodeId, ms, nowMs);
  }

  /** Prefill work sent to the node and not yet worked through at `nowMs`, ms. */
  backlogOf(nodeId: string, nowMs: number): number {
    return this.backlog.get(nodeId, nowMs);
  }

  /** Counts a request as queued at the node until its next heartbeat reports the real load. */
  addPending(nodeId: string, delta = 1): void {
    const n = this.nodes.get(nodeId);
    if (n) this.nodes.set(nodeId, { ...n, waiting: Math.max(0, n.waiting + delta) });
  }
}
