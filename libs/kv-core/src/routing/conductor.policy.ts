import type { DirectoryTier, NodePrefix } from '../directory/kv-directory.types.js';
import { CHUNK_TOKENS } from '../keys/chunk.constants.js';
import { deviceChunks } from './device-prefix.js';
import { recomputeSpanMs } from './prefill.cost.js';
import { queueAheadMs, reservedLoad } from './route.load.js';
import type { RouteCandidate, RouteDecision, RouteRequest, RoutingCosts } from './route.types.js';

/**
 * Mooncake's Conductor (FAST'25, Algorithm 1: KVCache-centric scheduling of prefill instances).
 * For each instance it estimates the time to first token as queue + transfer + prefill and picks
 * the smallest:
 * - queue: the prefill work queued there (queueAheadMs, the same wait symphony prices: queued
 *   requests, the prefill backlog the scheduler sent and the node has not worked through, and a
 *   slot when the batch is full; decoding sequences are not queued prefill work);
 * - transfer: when the longest prefix anyone holds (best_len) is more than `threshold` times the
 *   instance's own (prefix_len), the missing chunks come from that holder — each at the holder's
 *   tier read plus the network — and the instance then holds best_len (the copy replicates a hot
 *   prefix, §4.2); otherwise nothing moves;
 * - prefill: the prompt past what the instance then holds (the paper fits it over request and
 *   prefix length: here the per-chunk recompute cost plus attention's term per chunk of context,
 *   recomputeSpanMs), plus reading its own cached prefix from its tiers.
 * A request whose best estimate exceeds the TTFT SLO is rejected (Algorithm 1's last step). The
 * paper publishes no threshold: it is a parameter, swept by the twin's trace experiment.
 */
export interface ConductorOptions {
  /** Transfer when best_len ÷ prefix_len exceeds this (prefix_len 0: whenever anyone holds a prefix). Infinity: never transfer. */
  readonly threshold: number;
  /** Reject above this estimated time to first token, ms. Default: never. */
  readonly ttftSloMs?: number;
}

/** Used by the scheduler's `conductor` policy unless configured: move a prefix that is at least twice as long as the local one. */
export const DEFAULT_CONDUCTOR_THRESHOLD = 2;

/** One instance's terms of Algorithm 1, ms. */
export interface ConductorEstimate {
  readonly nodeId: string;
  readonly prefixChunks: number;
  /** Chunks fetched from `from` (0 when nothing moves). */
  readonly transferChunks: number;
  readonly from: string | null;
  readonly queueMs: number;
  readonly transferMs: number;
  readonly prefillMs: number;
  readonly ttftMs: number;
}

export interface ConductorChoice {
  readonly decision: RouteDecision;
  readonly estimate: ConductorEstimate;
  /** The best estimate exceeds the TTFT SLO: Algorithm 1 rejects the request. */
  readonly rejected: boolean;
}

/** The holder of the longest prefix (ties: faster first tier read, then the smaller node id). */
function bestHolder(prefixes: readonly NodePrefix[], costs: RoutingCosts): NodePrefix | null {
  let best: NodePrefix | null = null;
  const read = (p: NodePrefix) => costs.loadMsPerChunk[p.tiers[0] as DirectoryTier] ?? 0;
  for (const p of prefixes) {
    if (p.prefixChunks === 0) continue;
    if (
      !best ||
      p.prefixChunks > best.prefixChunks ||
      (p.prefixChunks === best.prefixChunks && (read(p) < read(best) || (read(p) === read(best) && p.nodeId < best.nodeId)))
    )
      best = p;
  }
  return best;
}

const tierReadMs = (p: NodePrefix, from: number, to: number, costs: RoutingCosts): number => {
  let ms = 0;
  for (let i = from; i < to; i++) ms += costs.loadMsPerChunk[p.tiers[i]!];
  return ms;
};

/** Algorithm 1's estimate on every candidate, in candidate order. */
export function conductorEstimates(
  nodes: readonly RouteCandidate[],
  req: RouteRequest,
  costs: RoutingCosts,
  o: ConductorOptions,
): ConductorEstimate[] {
  const best = bestHolder(req.prefixes, costs);
  const bestLen = Math.min(best?.prefixChunks ?? 0, req.chunkKeys.length);
  const prefixes = new Map(req.prefixes.map((p) => [p.nodeId, p]));
  const promptTokens = Math.max(req.promptTokens ?? 0, req.chunkKeys.length * CHUNK_TOKENS);
  const canFetch = Number.isFinite(costs.peerMsPerChunk);
  return nodes.map((n) => {
    const own = prefixes.get(n.nodeId);
    const prefixLen = Math.min(own?.prefixChunks ?? 0, req.chunkKeys.length);
    const ratio = prefixLen === 0 ? (bestLen > 0 ? Infinity : 0) : bestLen / prefixLen;
    const move = canFetch && best !== null && best.nodeId !== n.nodeId && bestLen > prefixLen && ratio > o.threshold;
    const held = move ? bestLen : prefixLen;
    const transferMs = move ? tierReadMs(best!, prefixLen, bestLen, costs) + (bestLen - prefixLen) * costs.peerMsPerChunk : 0;
    const readMs = own ? tierReadMs(own, 0, prefixLen, costs) : 0;
    const prefillMs = readMs + recomputeSpanMs(costs, held, promptTokens / CHUNK_TOKENS);
    const queueMs = queueAheadMs(n, costs);
    return {
      nodeId: n.nodeId,
      prefixChunks: prefixLen,
      transferChunks: move ? bestLen - prefixLen : 0,
      from: move ? best!.nodeId : null,
      queueMs,
      transferMs,
      prefillMs,
      ttftMs: queueMs + transferMs + prefillMs,
    };
  });
}

/**
 * Algorithm 1's pick: the smallest estimated TTFT (ties to the lower load, then the smaller node
 * id, so scheduler replicas agree), with the chunks to fetch as kv_sources. Null for no candidates.
 */
export function pickConductor(
  nodes: readonly RouteCandidate[],
  req: RouteRequest,
  costs: RoutingCosts,
  o: ConductorOptions,
): ConductorChoice | null {
  if (nodes.length === 0) return null;
  const est = conductorEstimates(nodes, req, costs, o);
  let b = 0;
  for (let i = 1; i < nodes.length; i++) {
    const [x, y] = [est[i]!, est[b]!];
    const [lx, ly] = [reservedLoad(nodes[i]!, costs), reservedLoad(nodes[b]!, costs)];
    if (x.ttftMs < y.ttftMs || (x.ttftMs === y.ttftMs && (lx < ly || (lx === ly && x.nodeId < y.nodeId)))) b = i;
  }
  const e = est[b]!;
  // The node can use a transfer only as one run from the first chunk its device lacks (deviceChunks):
  // the chunks it holds on host or SSD come in the same run, or the node would recompute the rest.
  const fetchFrom = Math.min(e.prefixChunks, deviceChunks(req.prefixes.find((p) => p.nodeId === e.nodeId)));
  const kvSources = e.from ? [{ nodeId: e.from, chunkKeys: req.chunkKeys.slice(fetchFrom, e.prefixChunks + e.transferChunks) }] : [];
  return {
    decision: {
      nodeId: e.nodeId,
      reason: 'cheapest',
      kvSources,
      estimateMs: e.ttftMs,
      candidates: est.map((x) => ({ nodeId: x.nodeId, queueMs: x.queueMs, kvMs: x.transferMs + x.prefillMs, totalMs: x.ttftMs })),
    },
    estimate: e,
    rejected: o.ttftSloMs !== undefined && e.ttftMs > o.ttftSloMs,
  };
}
