import type { NatsConnection } from '@nats-io/transport-node';
import { create } from '@bufbuild/protobuf';
import { encodeMessage, KvChangeKind, KvChangeSchema, KvEventSchema, KvTier, Subjects, type KvChange } from '@mnemo/proto';
import type { PoolTier } from '@mnemo/kv-core';

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

/**
 * Publishes every change to what this node holds as KvEvents on KV_EVENTS, batched: changes
 * collected within one period go out as one event, with a per-process sequence number so a
 * subscriber can tell it missed one. Changes of one kind, tier and model are merged.
 */
export class KvEventsPublisher {
  private pending = new Map<string, { change: KvHoldingChange; keys: Set<string> }>();
  private seq = 0n;
  private timer?: NodeJS.Timeout;
  published = 0;

  constructor(
    private readonly nc: NatsConnection,
    private readonly nodeId: string,
    private readonly periodMs: number,
  ) {}

  add(change: KvHoldingChange): void {
    if (change.keys.length === 0) return;
    const id = `${change.kind}/${change.tier}/${change.model}/${change.layers ?? ''}`;
    const entry = this.pending.get(id) ?? { change, keys: new Set<string>() };
    for (const k of change.keys) entry.keys.add(k);
    this.pending.set(id, entry);
    this.timer ??= setTimeout(() => this.flush(), this.periodMs).unref();
  }

  /** Sends what is pending now (also at shutdown). */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.size === 0 || this.nc.isClosed()) return;
    const changes: KvChange[] = [...this.pending.values()].map(({ change, keys }) =>
      create(KvChangeSchema, { kind: KINDS[change.kind], tier: TIERS[change.tier], model: change.model, chunkKeys: [...keys], layers: change.layers ?? 0 }),
    );
    this.pending.clear();
    this.nc.publish(Subjects.KV_EVENTS, encodeMessage(KvEventSchema, { nodeId: this.nodeId, seq: ++this.seq, changes, sentUnixMs: Date.now() }));
    this.published++;
  }
}
