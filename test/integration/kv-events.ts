// The KV events a cluster's nodes publish, recorded as they come: for specs that read what a node
// reported or wait for a chunk to reach one of its tiers.
import type { NatsConnection } from '@nats-io/transport-node';
import { decodeMessage, KvEventSchema, KvTier, Subjects, type KvEvent } from '@mnemo/proto';

export class KvEventLog {
  readonly events: KvEvent[] = [];

  /** Subscribes at once; the recording ends with the connection. */
  constructor(nc: NatsConnection) {
    const sub = nc.subscribe(Subjects.KV_EVENTS);
    void (async () => {
      for await (const m of sub) this.events.push(decodeMessage(KvEventSchema, m.data));
    })();
  }

  /** A KV event has reported `key` on the node's host pool (E-cache chunks are reported like KV). */
  inHost(nodeId: string, key: string): boolean {
    return this.events.some((e) => e.nodeId === nodeId && e.changes.some((c) => c.tier === KvTier.HOST && c.chunkKeys.includes(key)));
  }

  /** Until {@link inHost}; false when `timeoutMs` passes first. */
  async untilInHost(nodeId: string, key: string, timeoutMs = 20_000): Promise<boolean> {
    const end = Date.now() + timeoutMs;
    while (!this.inHost(nodeId, key)) {
      if (Date.now() > end) return false;
      await new Promise((r) => setTimeout(r, 25));
    }
    return true;
  }
}
