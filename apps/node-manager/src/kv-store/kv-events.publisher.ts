import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { create } from '@bufbuild/protobuf';
import {
  decodeMessage,
  encodeMessage,
  KvChangeKind,
  KvChangeSchema,
  KvEventSchema,
  KvReportRequestSchema,
  KvTier,
  SessionTailSchema,
  Subjects,
  type KvChange,
} from '@mnemo/proto';
import type { PoolTier } from '@mnemo/kv-core';
import type { SessionTailReport } from './session.tails.js';

/** One change to what a tier of this node holds (the device tier included). */
export interface KvHoldingChange {
  readonly kind: 'stored' | 'removed' | 'truncated';
  readonly tier: PoolTier | 'device';
  readonly model: string;
  readonly keys: readonly string[];
  readonly layers?: number;
}

const TIERS: Readonly<Record<KvHoldingChange['tier'], KvTier>> = { device: KvTier.DEVICE, mem: KvTier.HOST, ssd: KvTier.SSD };
const KINDS: Readonly<Record<KvHoldingChange['kind'], KvChangeKind>> = {
  stored: KvChangeKind.STORED,
  removed: KvChangeKind.REMOVED,
  truncated: KvChangeKind.TRUNCATED,
};
const BIT: Readonly<Record<KvHoldingChange['tier'], number>> = { device: 1, mem: 2, ssd: 4 };
/** Session tails kept for one event at most; past it the oldest go (a tail is a routing hint, not state). */
const MAX_PENDING_TAILS = 4096;

/**
 * Publishes every change to what this node holds as KvEvents on KV_EVENTS, batched: changes
 * collected within one period go out as one event, with a per-process sequence number so a
 * subscriber can tell it missed one. Changes of one kind, tier and model are merged.
 *
 * It also keeps what the published changes add up to (model → key → tiers with every layer), so
 * a scheduler that restarted or saw a gap can ask for a full report (KV_REPORT) instead of
 * waiting for the node's whole cache to churn.
 */
export class KvEventsPublisher {
  private pending = new Map<string, { change: KvHoldingChange; keys: Set<string> }>();
  private tails: SessionTailReport[] = [];
  private readonly holdings = new Map<string, Map<string, number>>();
  private seq = 0n;
  private timer?: NodeJS.Timeout;
  private reportSub?: Subscription;
  published = 0;

  constructor(
    private readonly nc: NatsConnection,
    private readonly nodeId: string,
    private readonly periodMs: number,
  ) {}

  add(change: KvHoldingChange): void {
    if (change.keys.length === 0) return;
    this.mirror(change);
    const id = `${change.kind}/${change.tier}/${change.model}/${change.layers ?? ''}`;
    const entry = this.pending.get(id) ?? { change, keys: new Set<string>() };
    for (const k of change.keys) entry.keys.add(k);
    this.pending.set(id, entry);
    this.timer ??= setTimeout(() => this.flush(), this.periodMs).unref();
  }

  /** A session's request ended here: goes out with the next event, after that event's changes. */
  addSessionTail(tail: SessionTailReport): void {
    this.tails.push(tail);
    if (this.tails.length > MAX_PENDING_TAILS) this.tails.shift();
    this.timer ??= setTimeout(() => this.flush(), this.periodMs).unref();
  }

  /** Sends what is pending now (also at shutdown). */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    // A timer may fire while the node shuts down: a draining connection refuses publishes (and would throw from the timer).
    if ((this.pending.size === 0 && this.tails.length === 0) || this.nc.isClosed() || this.nc.isDraining()) return;
    const changes: KvChange[] = [...this.pending.values()].map(({ change, keys }) =>
      create(KvChangeSchema, {
        kind: KINDS[change.kind],
        tier: TIERS[change.tier],
        model: change.model,
        chunkKeys: [...keys],
        layers: change.layers ?? 0,
      }),
    );
    const sessionTails = this.tails.map((t) => create(SessionTailSchema, { ...t, chunkKeys: [...t.chunkKeys] }));
    this.pending.clear();
    this.tails = [];
    this.nc.publish(
      Subjects.KV_EVENTS,
      encodeMessage(KvEventSchema, { nodeId: this.nodeId, seq: ++this.seq, changes, sentUnixMs: Date.now(), sessionTails }),
    );
    this.published++;
  }

  /**
   * Publishes everything held now as one KvEvent with full = true. Pending changes go first, so
   * the report's seq follows them and a receiver that replaces its view loses nothing.
   */
  report(): void {
    this.flush();
    if (this.nc.isClosed() || this.nc.isDraining()) return;
    const changes: KvChange[] = [];
    for (const [model, keys] of this.holdings) {
      for (const [tier, bit] of Object.entries(BIT) as Array<[KvHoldingChange['tier'], number]>) {
        const chunkKeys = [...keys].filter(([, mask]) => mask & bit).map(([k]) => k);
        if (chunkKeys.length > 0) changes.push(create(KvChangeSchema, { kind: KvChangeKind.STORED, tier: TIERS[tier], model, chunkKeys }));
      }
    }
    this.nc.publish(
      Subjects.KV_EVENTS,
      encodeMessage(KvEventSchema, { nodeId: this.nodeId, seq: ++this.seq, changes, sentUnixMs: Date.now(), full: true }),
    );
    this.published++;
  }

  /** Answers KV_REPORT requests that name this node (or every node). */
  answerReports(onError: (e: unknown) => void): void {
    this.reportSub = this.nc.subscribe(Subjects.KV_REPORT, {
      callback: (err, msg) => {
        if (err) return onError(err);
        try {
          const req = decodeMessage(KvReportRequestSchema, msg.data);
          if (req.nodeIds.length === 0 || req.nodeIds.includes(this.nodeId)) this.report();
        } catch (e) {
          onError(e);
        }
      },
    });
  }

  close(): void {
    if (!this.nc.isClosed()) this.reportSub?.unsubscribe();
  }

  /** Chunks held per tier, all layers (a truncated copy is not a copy a peer can serve). */
  private mirror(c: KvHoldingChange): void {
    let keys = this.holdings.get(c.model);
    if (!keys) this.holdings.set(c.model, (keys = new Map()));
    for (const k of c.keys) {
      const mask = c.kind === 'stored' ? (keys.get(k) ?? 0) | BIT[c.tier] : (keys.get(k) ?? 0) & ~BIT[c.tier];
      if (mask === 0) keys.delete(k);
      else keys.set(k, mask);
    }
  }
}
