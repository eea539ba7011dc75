import { metricBuilders, type ServiceMetrics } from '@mnemo/service-kit';
import type { KvStore } from '../kv-store/kv.store.js';
import type { ChunkPeerClient } from './chunk-peer.client.js';
import { noPeerFailures, type PeerAwarePromptStore } from './peer-aware.prompt-store.js';

/** Node ↔ node KV transfer, read from the tallies at scrape time (no metric objects on the hot path). */
export class PeerMetrics {
  constructor(metrics: ServiceMetrics, client: ChunkPeerClient, prompts?: PeerAwarePromptStore, store?: KvStore) {
    const { tally, tallyBy, sampled } = metricBuilders(metrics.registry);
    tally('mnemo_kv_peer_fetch_bytes_total', 'Verified KV bytes pulled from other nodes', () => client.counters.bytes);
    tallyBy(
      'mnemo_kv_peer_link_bytes_total',
      "Verified KV bytes pulled from each peer, by its gRPC address (this node's inbound links; `other` past 4 × the channel limit)",
      ['peer'],
      () => [...client.bytesByPeer].map(([peer, bytes]) => [{ peer }, bytes] as const),
    );
    tally('mnemo_kv_peer_fetch_chunks_total', 'Chunk layer ranges pulled from other nodes and verified', () => client.counters.chunks);
    tally(
      'mnemo_kv_peer_fetch_misses_total',
      'Chunks a peer did not give (not held, corrupt, truncated, unreachable)',
      () => client.counters.misses,
    );
    tally(
      'mnemo_kv_peer_corrupt_total',
      'Chunks from peers that failed their size or CRC32C check (treated as misses)',
      () => client.counters.corrupt,
    );
    tally(
      'mnemo_kv_peer_fetch_deadlines_total',
      'Chunk fetches given up because a chunk missed its deadline (size over the ' +
        'measured link speed, plus NODE_PEER_DEADLINE_BASE_MS): a hung or very slow peer',
      () => client.counters.deadlines,
    );
    tally(
      'mnemo_kv_peer_channels_evicted_total',
      'gRPC channels to peers closed after being idle (or to keep at most 64)',
      () => client.counters.evicted,
    );
    sampled('mnemo_kv_peer_channels', 'gRPC channels to peers open now', () => client.openChannels);
    tally('mnemo_kv_peer_restores_total', 'Prefills that fetched their prefix from another node', () => prompts?.counters.plans ?? 0);
    tally('mnemo_kv_peer_restore_failures_total', 'Peer restores that failed and were recomputed', () => prompts?.counters.failures ?? 0);
    tallyBy(
      'mnemo_kv_peer_restore_failures_by_reason_total',
      'Peer restores that failed, by why: stale (the peer no longer held a whole chunk), stale_partial (nor the partial ' +
        "chunk a session's last turn left there), unreachable (a chunk it did not give: down, past its deadline, corrupt), " +
        'pass (every layer arrived and the prefill itself failed)',
      ['reason'],
      () => Object.entries(prompts?.counters.failuresBy ?? noPeerFailures()).map(([reason, n]) => [{ reason }, n] as const),
    );
    tally(
      'mnemo_kv_peer_restored_tokens_total',
      'Prompt tokens restored from other nodes instead of recomputed',
      () => prompts?.counters.restoredTokens ?? 0,
    );
    tally(
      'mnemo_kv_prefetch_chunks_total',
      'Chunks advisories pulled from other nodes into the host pool',
      () => store?.peerCounters.prefetchedChunks ?? 0,
    );
    tally(
      'mnemo_kv_prefetch_bytes_total',
      'Bytes advisories pulled from other nodes into the host pool',
      () => store?.peerCounters.prefetchedBytes ?? 0,
    );
    tally(
      'mnemo_kv_prefetch_purged_segments_total',
      'Prefetched segments dropped without copy-back to make room (cooperative memory)',
      () => store?.prefetched.purgedSegments ?? 0,
    );
    const staged = (k: 'staged' | 'adopted' | 'purged' | 'unstaged') => () => store?.promotion.stats()[k] ?? 0;
    tally(
      'mnemo_kv_prefetch_promoted_chunks_total',
      'Prefetched chunks promoted to free device blocks ahead of their request',
      staged('staged'),
    );
    tally(
      'mnemo_kv_prefetch_promoted_used_total',
      'Promoted chunks a prefill found on the device (no restore on its path)',
      staged('adopted'),
    );
    tally(
      'mnemo_kv_prefetch_promoted_purged_total',
      "Promoted chunks dropped from the device without copy-back for a running sequence's blocks (cooperative memory)",
      staged('purged'),
    );
    tally(
      'mnemo_kv_prefetch_promoted_unstaged_total',
      'Promoted chunks dropped from the device because their advisory was withdrawn or expired',
      staged('unstaged'),
    );
    tally(
      'mnemo_kv_peer_blocked_seconds_total',
      'Time prefills waited on layers from peers after their compute ran out (blocked I/O)',
      () => (prompts?.counters.blockedMs ?? 0) / 1000,
    );
    tally('mnemo_kv_peer_served_bytes_total', 'KV bytes this node served to other nodes', () => store?.peerCounters.servedBytes ?? 0);
  }
}
