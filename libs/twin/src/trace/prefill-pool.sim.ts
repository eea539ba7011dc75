import { CHUNK_TOKENS, pickConductor, route, type NodePrefix, type RouteCandidate, type RoutingCosts } from '@mnemo/kv-core';
import { EventQueue } from '../core/event.queue.js';
import { percentile } from '@mnemo/kv-core';
import { SeededRng } from '../core/seeded.rng.js';
import { ChunkCache, type CacheTier } from './chunk.cache.js';
import type { PrefillCosts } from './mooncake.hardware.js';
import type { TraceRequest } from './mooncake.trace.js';

/**
 * The policies a trace replay compares:
 * - random: a uniformly random instance;
 * - least-loaded: the least queued prefill work (kv-core `recompute`);
 * - local: Mooncake's local cache-aware scheduling — Conductor with no transfers (threshold ∞);
 * - conductor: Mooncake's Algorithm 1 with transfers (its global cache-aware scheduling);
 * - llmd: kv-core's llm-d-style scorers;
 * - symphony: kv-core's symphony estimate, peer fetch per chunk.
 * Every instance reuses whatever prefix its own cache holds, whichever policy sent the request.
 */
export const TRACE_POLICIES = ['random', 'least-loaded', 'local', 'conductor', 'llmd', 'symphony'] as const;
export type TracePolicy = (typeof TRACE_POLICIES)[number];

export interface PrefillPoolConfig {
  readonly nodes: number;
  /** Cache per node in tokens: DRAM and SSD (every policy the same). */
  readonly hostTokens: number;
  readonly ssdTokens: number;
  readonly policy: TracePolicy;
  /** Conductor's transfer threshold (best_len ÷ prefix_len). */
  readonly threshold: number;
  /** Arrivals are the trace's (already scaled at load) times this. */
  readonly timeScale: number;
  readonly costs: PrefillCosts;
  /** What routing prices a recomputed chunk at (a linear fit of the instance's prefill), ms. */
  readonly recomputeMsPerChunk: number;
  readonly seed: number;
}

export interface PrefillPoolResult {
  readonly requests: number;
  readonly ttft_mean_ms: number;
  readonly ttft_p99_ms: number;
  /** Prompt tokens whose KV was reused (the instance's own cache or moved from a peer) ÷ prompt tokens. */
  readonly hit_rate: number;
  /** The part of hit_rate from the instance's own cache. */
  readonly local_hit_rate: number;
  readonly transferred_chunks: number;
  /** Mean GPU time of a request's prefill computation (no reads or transfers), ms. */
  readonly prefill_gpu_mean_ms: number;
  /** Busiest instance's prefill GPU time ÷ the mean instance's. */
  readonly busy_max_over_mean: number;
  /**
   * Prefill GPU time asked of the pool ÷ the pool's GPU time over the arrivals' span: above 1 the
   * policy's work outruns the pool and its queues grow for as long as the trace lasts.
   */
  readonly offered_load: number;
}

const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

function routingCosts(c: PrefillPoolConfig): RoutingCosts {
  return {
    // Any unit works: every policy here reads the backlog in ms (queueMsPerRequest × backlog ÷ queueMsPerRequest).
    queueMsPerRequest: 1000,
    reservationWeight: 0,
    recomputeMsPerChunk: c.recomputeMsPerChunk,
    loadMsPerChunk: { device: 0, host: c.costs.hostChunkMs, ssd: c.costs.ssdChunkMs },
    peerMsPerChunk: c.costs.peerChunkMs,
    moveMarginMs: 0,
    conductorThreshold: c.threshold,
  };
}

/**
 * Replays `requests` through `nodes` prefill instances. Each instance works through its queue one
 * prefill at a time (FIFO); a request's KV joins the instance's cache when its prefill ends, and
 * chunks moved from a peer join it too (Conductor's transfer replicates hot blocks). A transfer
 * overlaps the request's wait in the queue. TTFT is arrival to the end of the prefill (Mooncake
 * disaggregates decode; its first token leaves the prefill instance).
 */
export function runPrefillPool(requests: readonly TraceRequest[], c: PrefillPoolConfig): PrefillPoolResult {
  if (!Number.isInteger(c.nodes) || c.nodes < 1) throw new RangeError(`nodes must be an integer ≥ 1, got ${c.nodes}`);
  const ids = Array.from({ length: c.nodes }, (_, i) => `p${String(i).padStart(3, '0')}`);
  const caches = ids.map(() => new ChunkCache(Math.floor(c.hostTokens / CHUNK_TOKENS), Math.floor(c.ssdTokens / CHUNK_TOKENS)));
  const busyUntil = new Float64Array(c.nodes);
  const busyMs = new Float64Array(c.nodes);
  const costs = routingCosts(c);
  const rng = new SeededRng(c.seed);
  const readMs = (t: CacheTier) => (t === 'host' ? c.costs.hostChunkMs : c.costs.ssdChunkMs);
  const q = new EventQueue();
  const ttft: number[] = [];
  let [inputTokens, reused, local, moved, gpuMs] = [0, 0, 0, 0, 0];

  const arrive = (r: TraceRequest, now: number) => {
    const tiers = caches.map((cache) => cache.prefix(r.chunkKeys));
    const prefixes: NodePrefix[] = [];
    tiers.forEach((t, i) => t.length > 0 && prefixes.push({ nodeId: ids[i]!, prefixChunks: t.length, tiers: t }));
    const nodes: RouteCandidate[] = ids.map((nodeId, i) => ({
      nodeId,
      models: ['m'],
      running: 0,
      waiting: 0,
      kvUsage: 0,
      lastSeenMs: now,
      reservations: 0,
      backlogMs: Math.max(0, busyUntil[i]! - now),
    }));
    const req = { model: 'm', chunkKeys: r.chunkKeys, prefixes, promptTokens: r.inputTokens };
    let nodeId: string;
    let sources: { nodeId: string; chunkKeys: readonly string[] }[] = [];
    if (c.policy === 'random') nodeId = ids[Math.floor(rng.next() * c.nodes)]!;
    else if (c.policy === 'local' || c.policy === 'conductor') {
      const choice = pickConductor(nodes, req, costs, { threshold: c.policy === 'local' ? Infinity : c.threshold })!;
      nodeId = choice.decision.nodeId;
      sources = [...choice.decision.kvSources];
    } else {
      const d = route(c.policy === 'least-loaded' ? 'recompute' : c.policy, nodes, req, costs)!;
      nodeId = d.nodeId;
      if (c.policy === 'symphony') sources = [...d.kvSources];
    }
    const i = ids.indexOf(nodeId);
    const own = tiers[i]!;
    let transferMs = 0;
    let fetched = 0;
    for (const s of sources) {
      const h = ids.indexOf(s.nodeId);
      const held = tiers[h]!;
      for (const k of s.chunkKeys) transferMs += readMs(held[r.chunkKeys.indexOf(k, own.length)]!) + c.costs.peerChunkMs;
      fetched += s.chunkKeys.length;
      caches[h]!.use(r.chunkKeys.slice(0, held.length), now);
    }
    caches[i]!.use(r.chunkKeys.slice(0, own.length), now);
    const covered = Math.min(r.inputTokens, (own.length + fetched) * CHUNK_TOKENS);
    const compute = c.costs.prefillMs(r.inputTokens - covered, covered);
    const start = Math.max(busyUntil[i]!, now + transferMs);
    const end = start + own.reduce((s, t) => s + readMs(t), 0) + compute;
    busyUntil[i] = end;
    busyMs[i] += compute;
    gpuMs += compute;
    inputTokens += r.inputTokens;
    reused += covered;
    local += Math.min(r.inputTokens, own.length * CHUNK_TOKENS);
    moved += fetched;
    ttft.push(end - now);
    q.at(end, { fire: (t) => caches[i]!.use(r.chunkKeys, t) });
  };

  for (const r of requests) q.at(r.arrivalMs * c.timeScale, { fire: (now) => arrive(r, now) });
  q.run();
  const meanBusy = busyMs.reduce((s, x) => s + x, 0) / c.nodes;
  const span = (Math.max(...requests.map((r) => r.arrivalMs)) - Math.min(...requests.map((r) => r.arrivalMs))) * c.timeScale;
  return {
    requests: requests.length,
    ttft_mean_ms: round(ttft.reduce((s, x) => s + x, 0) / ttft.length, 1),
    ttft_p99_ms: round(percentile(ttft, 99) ?? 0, 1),
    hit_rate: round(reused / inputTokens, 4),
    local_hit_rate: round(local / inputTokens, 4),
    transferred_chunks: moved,
    prefill_gpu_mean_ms: round(gpuMs / requests.length, 1),
    busy_max_over_mean: round(Math.max(...busyMs) / meanBusy, 3),
    offered_load: span > 0 ? round(gpuMs / (c.nodes * span), 3) : 0,
  };
}
