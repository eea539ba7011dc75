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
import { HoldingChangeBatch, TierHoldings, type HoldingChange } from '@mnemo/kv-core';
import type { SessionTailReport } from './session.tails.js';

const TIERS: Readonly<Record<HoldingChange['tier'], KvTier>> = { device: KvTier.DEVICE, mem: KvTier.HOST, ssd: KvTier.SSD };
const KINDS: Readonly<Record<HoldingChange['kind'], KvChangeKind>> = {
  stored: KvChangeKind.STORED,
  removed: KvChangeKind.REMOVED,
  truncated: KvChangeKind.TRUNCATED,
};
/** Session tails kept for one event at most; past it the oldest go (a tail is a routing hint, not state). */
const MAX_PENDING_TAILS = 4096;

/**
 * Publishes every change to what this node holds as KvEvents on KV_EVENTS, batched: changes
 * collected within one period go out as one event, with a per-process sequence number so a
 * subscriber can tell it missed one. Changes of one kind, tier and model are merged (kv-core HoldingChangeBatch).
 *
 * It also keeps what the published changes add up to (kv-core TierHoldings), so
 * a scheduler that restarted or saw a gap can ask for a full report (KV_REPORT) instead of
 * waiting for the node's whole cache to churn.
 */
export class KvEventsPublisher {
  private readonly pending = new HoldingChangeBatch();
  private tails: SessionTailReport[] = [];
  private readonly holdings = new TierHoldings();
  private seq = 0n;
  private timer?: NodeJS.Timeout;
  private reportSub?: Subscription;
  published = 0;

  constructor(
    private readonly nc: NatsConnection,
    private readonly nodeId: string,
    private readonly periodMs: number,
  ) {}

  add(change: HoldingChange): void {
    if (change.keys.length === 0) return;
    this.holdings.apply(change);
    this.pending.add(change);
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
    const changes: KvChange[] = this.pending.take().map((change) =>
      create(KvChangeSchema, {
        kind: KINDS[change.kind],
        tier: TIERS[change.tier],
        model: change.model,
        chunkKeys: [...change.keys],
        layers: change.layers ?? 0,
      }),
    );
    const sessionTails = this.tails.map((t) => create(SessionTailSchema, { ...t, chunkKeys: [...t.chunkKeys] }));
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
    const changes: KvChange[] = this.holdings
      .report()
      .map((c) => create(KvChangeSchema, { kind: KvChangeKind.STORED, tier: TIERS[c.tier], model: c.model, chunkKeys: [...c.keys] }));
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
}
