import type { DirectoryTier } from '../directory/kv-directory.types.js';

/** A node's load as last reported in its heartbeat; the scheduler's soft state. */
export interface NodeLoad {
  nodeId: string;
  /** Model ids this node can serve now. */
  models: string[];
  /** Sequences in the node's current batch. */
  running: number;
  /** Sequences queued at the node, not yet admitted. */
  waiting: number;
  /** Fraction of the device KV cache in use, 0..1. */
  kvUsage: number;
  /** Scheduler clock (ms) when the last heartbeat arrived. */
  lastSeenMs: number;
  /** What the node measured of its own costs (absent: not reported; routing uses the configured figures). */
  costs?: MeasuredCosts;
  /** Sequences the node's batch holds at most (NODE_MAX_BATCH); absent: not reported. */
  maxBatch?: number;
  /**
   * The prefill the node had in hand when it sent the heartbeat, ms, priced with its own measured
   * costs (NodeCostMeters.prefillBusyMs): what is left of the pass in flight plus what its waiting
   * sequences still have to prefill (queuedPrefill). Absent: not reported.
   */
  prefillBusyMs?: number;
}

/** A node's reported KV usage as routing weighs it: within [0, 1], and full when the report is not a number (never pile onto it). */
export function kvUsageOf(n: Pick<NodeLoad, 'kvUsage'>): number {
  return Math.min(1, Math.max(0, Number.isFinite(n.kvUsage) ? n.kvUsage : 1));
}

/**
 * What is left at `nowMs` of the prefill work a node reported. The scheduler's own backlog prices
 * what it sent by what it expected the node to hold, and drains it in real time from the dispatch;
 * a node that restored less and recomputed (a peer lost a chunk, the directory was stale) is busy
 * for longer than that, and a prompt waiting for free KV blocks has not started when its backlog
 * has drained: only the node knows either.
 */
export function reportedPrefillMs(n: Pick<NodeLoad, 'prefillBusyMs' | 'lastSeenMs'>, nowMs: number): number {
  const busy = n.prefillBusyMs;
  if (busy === undefined || !Number.isFinite(busy) || busy <= 0) return 0;
  return Math.max(0, busy - Math.max(0, nowMs - n.lastSeenMs));
}

/**
 * What a node measured of its own costs (kv-core PassCostModel over its prefill passes) and
 * reports in its heartbeats, per 256-token chunk, ms. A figure is absent until the node has
 * measured it; routing then uses the scheduler's configured figure.
 */
export interface MeasuredCosts {
  /** Prefilling one chunk the node holds nowhere. */
  readonly recomputeMsPerChunk?: number;
  /** What attention adds to prefilling a chunk per chunk of context before it (RoutingCosts.attentionMsPerChunkPair). */
  readonly attentionMsPerChunkPair?: number;
  /** Restoring one chunk from its own host or SSD tier onto the device. */
  readonly loadMsPerChunk?: Partial<Record<Exclude<DirectoryTier, 'device'>, number>>;
  /** Pulling one chunk from a peer, on top of the peer's tier read. */
  readonly peerMsPerChunk?: number;
  /**
   * How often a batch slot frees while the batch is full: a sequence's mean time in the batch ÷
   * the batch size, ms (BatchSlotMeter). A request that finds the batch full waits about this per
   * request ahead of it past the last slot.
   */
  readonly slotMs?: number;
}
