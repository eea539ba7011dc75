import { Counter, Gauge, Histogram } from 'prom-client';
import type { ServiceMetrics } from '@mnemo/service-kit';
import type { KvStore } from '../kv-store/kv.store.js';
import type { KvEventsPublisher } from '../kv-events/kv-events.publisher.js';

const TIERS = [
  ['host', 'mem'],
  ['ssd', 'ssd'],
] as const;

/** Blocked-I/O buckets in seconds: most restores hide entirely behind compute. */
const blockedBuckets = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/**
 * The KV store's metrics on the node's registry. Counters read the store's own tallies at
 * scrape time (the store keeps no metric objects on its hot paths); blocked I/O is observed per
 * restoring prefill.
 */
export class KvStoreMetrics {
  readonly blockedIo: Histogram;

  constructor(metrics: ServiceMetrics, store: KvStore, events: KvEventsPublisher) {
    const registers = [metrics.registry];
    const t = store.tiers.counters;
    const c = store.counters;
    const tally = (name: string, help: string, read: () => number) =>
      new Counter({
        name,
        help,
        registers,
        collect() {
          this.reset();
          this.inc(read());
        },
      });
    const byTier = (name: string, help: string, read: (tier: 'mem' | 'ssd') => number) =>
      new Counter({
        name,
        help,
        labelNames: ['tier'],
        registers,
        collect() {
          this.reset();
          for (const [label, tier] of TIERS) this.inc({ tier: label }, read(tier));
        },
      });
    byTier('mnemo_kv_written_bytes_total', 'Bytes of KV segments written to each offload tier', (tier) => t.writtenBytes[tier]);
    byTier('mnemo_kv_read_bytes_total', 'Bytes of KV segments read back from each offload tier', (tier) => t.readBytes[tier]);
    byTier(
      'mnemo_kv_evicted_segments_total',
      'Segments (one layer of one chunk) evicted from each offload tier',
      (tier) => t.evictedSegments[tier],
    );
    byTier('mnemo_kv_hit_tokens_total', 'Prompt tokens restored from each offload tier instead of recomputed', (tier) => c.hitTokens[tier]);
    tally('mnemo_kv_expired_segments_total', 'SSD segments dropped after their TTL', () => t.expiredSegments);
    tally(
      'mnemo_kv_crc_failures_total',
      'Stored segments that failed their CRC32C check (dropped; the request recomputed)',
      () => t.crcFailures,
    );
    tally('mnemo_kv_journal_replays_total', 'SSD journals replayed at start (warm restarts)', () => t.journalReplays);
    tally('mnemo_kv_journal_replayed_segments_total', 'SSD segments found again by journal replay', () => t.journalReplayedSegments);
    tally(
      'mnemo_kv_journal_write_failures_total',
      'SSD journal flushes that failed (records kept, file cut back to the last good record, retried)',
      () => t.journalWriteFailures,
    );
    new Gauge({
      name: 'mnemo_kv_journal_failing',
      help: "1 while a model's SSD journal cannot write (its last flush failed), else 0",
      labelNames: ['model'],
      registers,
      collect() {
        this.reset();
        for (const h of store.tiers.journalHealth()) this.set({ model: h.model }, h.state === 'failing' ? 1 : 0);
      },
    });
    new Gauge({
      name: 'mnemo_kv_journal_pending_records',
      help: 'SSD journal records waiting for a successful flush, over all models',
      registers,
      collect() {
        this.set(store.tiers.journalHealth().reduce((n, h) => n + h.pending, 0));
      },
    });
    tally('mnemo_kv_restores_total', 'Prefills that restored a prefix from the offload tiers', () => c.plans);
    tally('mnemo_kv_restore_failures_total', 'Restores that failed (corrupt or missing copy) and were recomputed', () => c.failures);
    tally(
      'mnemo_kv_ssd_skipped_segments_total',
      'Segments the SSD pool had no room for (kept in faster tiers only)',
      () => store.writer.ssdSkipped,
    );
    tally(
      'mnemo_kv_ssd_dropped_segments_total',
      'Segments not queued for their SSD write because the write-behind queue was ' +
        'at NODE_KV_SSD_QUEUE_MB (kept in faster tiers only, or recomputed later)',
      () => store.writer.ssdDropped,
    );
    tally('mnemo_kv_events_published_total', 'KvEvents published on NATS', () => events.published);
    new Gauge({
      name: 'mnemo_kv_tier_bytes',
      help: 'Bytes of each offload tier, used and capacity',
      labelNames: ['tier', 'state'],
      registers,
      collect() {
        for (const [label, tier] of TIERS) {
          const u = store.tiers.usage(tier);
          this.set({ tier: label, state: 'used' }, u.used);
          this.set({ tier: label, state: 'capacity' }, u.capacity);
        }
      },
    });
    new Counter({
      name: 'mnemo_kv_warm_restores_total',
      help:
        'Restores whose SSD reads started as their request arrived, by outcome: used by its ' +
        'pass, stale (the pass found other positions to restore) or expired (no pass came)',
      labelNames: ['outcome'],
      registers,
      collect() {
        this.reset();
        const w = store.warmCounters;
        for (const outcome of ['used', 'stale', 'expired'] as const) this.inc({ outcome }, w[outcome]);
      },
    });
    new Gauge({
      name: 'mnemo_kv_swap_held_chunks',
      help: 'Host pool chunks kept pinned as the host copy of swapped-out sequences (FastSwitch swap copies leave them out)',
      registers,
      collect() {
        this.set(store.swapHolds.chunks);
      },
    });
    new Gauge({
      name: 'mnemo_kv_ssd_queue_depth',
      help: 'SSD I/O requests in flight over all SSD pool devices',
      registers,
      collect() {
        this.set(store.tiers.ssd.reduce((n, d) => n + ('stats' in d.device ? d.device.stats().inFlight : 0), 0));
      },
    });
    new Gauge({
      name: 'mnemo_kv_ssd_backend',
      help: 'SSD pool devices per I/O backend (io_uring, or pread: the pread/pwrite fallback, one request at a time)',
      labelNames: ['backend'],
      registers,
      collect() {
        this.reset();
        for (const d of store.tiers.ssd) if ('backend' in d.device) this.inc({ backend: d.device.backend });
      },
    });
    new Gauge({
      name: 'mnemo_kv_ssd_write_backlog_segments',
      help: 'Segments waiting for their background write to the SSD pool',
      registers,
      collect() {
        this.set(store.writer.pendingSsd);
      },
    });
    new Gauge({
      name: 'mnemo_kv_ssd_write_backlog_bytes',
      help: 'Bytes the SSD write-behind queue holds (pinned host segments and waiting payloads), bounded by NODE_KV_SSD_QUEUE_MB',
      registers,
      collect() {
        this.set(store.writer.pendingSsdBytes);
      },
    });
    this.blockedIo = new Histogram({
      name: 'mnemo_kv_blocked_io_seconds',
      help: 'Per restoring prefill: time the engine waited on layer loads after its compute ran out (blocked I/O)',
      buckets: blockedBuckets,
      registers,
    });
  }
}
