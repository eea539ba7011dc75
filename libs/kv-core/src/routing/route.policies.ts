import type { DirectoryTier, NodePrefix } from '../directory/kv-directory.types.js';
import { CHUNK_TOKENS } from '../keys/chunk.constants.js';
import { DEFAULT_CONDUCTOR_THRESHOLD, pickConductor } from './conductor.policy.js';
import { pickLlmd } from './llmd.policy.js';
import { reservedLoad } from './route.load.js';
import type { KvSourcePlan, RouteCandidate, RouteDecision, RouteRequest, RoutingCosts, RoutingPolicyName } from './route.types.js';

/**
 * Picks the node for one request under a policy; null when no candidate serves the model.
 * Every policy is deterministic (ties go to the smaller node id), so scheduler replicas agree.
 *
 * - `recompute` (vLLM-like): least loaded; KV location ignored.
 * - `sticky`: the session's previous node while it lives, else least loaded. InferCept routes so;
 *   whether the node keeps the session's KV on the device between turns or offloads it to host
 *   memory is the node's (SERVING_SYSTEMS: `infercept` and `sticky-device`).
 * - `prefix-affinity` (pure prefix routing): the longest cached prefix wins, load only breaks
 *   ties; a prompt everyone shares therefore pins traffic to its first holder. A labelled extra:
 *   no production router weighs prefix alone.
 * - `llmd`: llm-d's default profile — prefix-cache, queue and KV-utilization scores weighed
 *   3 : 2 : 2, the highest total wins (llmd.policy.ts).
 * - `symphony`: a live reservation is honoured unless another node's estimate beats the reserved
 *   node's by more than `moveMarginMs` (the announced request arrived to find it busy); otherwise each node's estimated time to first
 *   token — its queue, plus per chunk the cheapest of a local tier, a peer fetch or recomputing,
 *   plus, away from the session's home, recomputing the partial last chunk only the home holds —
 *   is compared, so KV placement only wins while it saves more than the extra queueing costs; a
 *   session leaves its live home only for a gain above `moveMarginMs`.
 * - `conductor`: Mooncake's Algorithm 1 — the smallest queue + transfer + prefill, a peer's longer
 *   prefix fetched past `conductorThreshold` times the node's own (conductor.policy.ts).
 */
export function route(
  policy: RoutingPolicyName,
  nodes: readonly RouteCandidate[],
  req: RouteRequest,
  costs: RoutingCosts,
): RouteDecision | null {
  const serving = nodes.filter((n) => n.models.includes(req.model));
  if (serving.length === 0) return null;
  const least = () => pick(serving, (n) => reservedLoad(n, costs), costs);
  const decide = (nodeId: string, reason: RouteDecision['reason']): RouteDecision => ({ nodeId, reason, kvSources: [], estimateMs: 0 });
  switch (policy) {
    case 'recompute':
      return decide(least().nodeId, 'least_loaded');
    case 'sticky': {
      const home = serving.find((n) => n.nodeId === req.sessionHome);
      return home ? decide(home.nodeId, 'session_home') : decide(least().nodeId, 'least_loaded');
    }
    case 'prefix-affinity': {
      const depth = new Map(req.prefixes.map((p) => [p.nodeId, p.prefixChunks]));
      const best = Math.max(0, ...serving.map((n) => depth.get(n.nodeId) ?? 0));
      if (best === 0) return decide(least().nodeId, 'least_loaded');
      const holders = serving.filter((n) => depth.get(n.nodeId) === best);
      return decide(pick(holders, (n) => reservedLoad(n, costs), costs).nodeId, 'longest_prefix');
    }
    case 'llmd':
      return decide(pickLlmd(serving, req.chunkKeys.length, req.prefixes, costs)!.nodeId, 'scored');
    case 'symphony':
      return symphony(serving, req, costs);
    case 'conductor':
      return pickConductor(serving, req, costs, { threshold: costs.conductorThreshold ?? DEFAULT_CONDUCTOR_THRESHOLD })!.decision;
  }
}

function symphony(serving: readonly RouteCandidate[], req: RouteRequest, costs: RoutingCosts): RouteDecision {
  const reserved = serving.find((n) => n.nodeId === req.reservedNode);
  const prefixes = new Map(req.prefixes.map((p) => [p.nodeId, p]));
  const homeAlive = serving.some((n) => n.nodeId === req.sessionHome);
  // The reserved node's reservation for this session is this request: no load in front of it.
  const own = (n: RouteCandidate) => (n === reserved && n.reservations > 0 ? { ...n, reservations: n.reservations - 1 } : n);
  const cost = (n: RouteCandidate) => estimate(own(n), req, prefixes, costs, homeAlive);
  const best = pick(serving, cost, costs);
  // The reservation prefetched this session's KV there, so its estimate already counts that KV
  // as local: it loses only to a node that is clearly faster now, as a session's home does.
  if (reserved && cost(best) + costs.moveMarginMs >= cost(reserved)) {
    return {
      nodeId: reserved.nodeId,
      reason: 'reservation',
      kvSources: sourcesFor(reserved.nodeId, req, prefixes, costs),
      estimateMs: cost(reserved),
    };
  }
  const home = homeAlive ? serving.find((n) => n.nodeId === req.sessionHome) : undefined;
  if (home && home !== best && cost(best) + costs.moveMarginMs >= cost(home)) {
    return {
      nodeId: home.nodeId,
      reason: 'session_home',
      kvSources: sourcesFor(home.nodeId, req, prefixes, costs),
      estimateMs: cost(home),
    };
  }
  return { nodeId: best.nodeId, reason: 'cheapest', kvSources: sourcesFor(best.nodeId, req, prefixes, costs), estimateMs: cost(best) };
}

/**
 * Estimated time to first token on `n`: its queue plus, per chunk, the cheapest way to have its
 * KV, plus — on any node but a live session home — having the tokens past the last whole chunk:
 * loading the partial chunk the session left from its own tiers or a peer's where one holds it
 * (the cheapest), else recomputing them (only the home has them cached).
 */
export function estimate(
  n: RouteCandidate,
  req: RouteRequest,
  prefixes: ReadonlyMap<string, NodePrefix>,
  costs: RoutingCosts,
  homeAlive = true,
): number {
  let ms = costs.queueMsPerRequest * reservedLoad(n, costs);
  const local = prefixes.get(n.nodeId);
  for (let i = 0; i < req.chunkKeys.length; i++) ms += chunkCost(i, n.nodeId, local, prefixes, costs);
  if (homeAlive && req.sessionHome !== undefined && n.nodeId !== req.sessionHome) ms += tailCost(n.nodeId, req, costs);
  return ms;
}

function tailCost(nodeId: string, req: RouteRequest, costs: RoutingCosts): number {
  const recompute = (tailTokens(req) / CHUNK_TOKENS) * costs.recomputeMsPerChunk;
  let best = recompute;
  for (const h of req.partialHolders ?? []) {
    const ms = costs.loadMsPerChunk[h.tier] + (h.nodeId === nodeId ? 0 : costs.peerMsPerChunk);
    if (ms < best) best = ms;
  }
  return best;
}

/** Prompt tokens past the last whole chunk (0 when the prompt length is not known). */
function tailTokens(req: RouteRequest): number {
  return req.promptTokens === undefined ? 0 : Math.max(0, req.promptTokens - req.chunkKeys.length * CHUNK_TOKENS);
}

function chunkCost(
  i: number,
  nodeId: string,
  local: NodePrefix | undefined,
  prefixes: ReadonlyMap<string, NodePrefix>,
  costs: RoutingCosts,
): number {
  if (local && i < local.prefixChunks) return costs.loadMsPerChunk[local.tiers[i]!];
  const peer = bestPeer(i, nodeId, prefixes, costs);
  return Math.min(costs.recomputeMsPerChunk, peer ? peer.ms : Infinity);
}

/** The peer that can serve chunk i fastest (tier read + network); ties to the smaller id. */
function bestPeer(
  i: number,
  except: string,
  prefixes: ReadonlyMap<string, NodePrefix>,
  costs: RoutingCosts,
): { nodeId: string; ms: number } | null {
  if (!Number.isFinite(costs.peerMsPerChunk)) return null;
  let best: { nodeId: string; ms: number } | null = null;
  for (const p of prefixes.values()) {
    if (p.nodeId === except || i >= p.prefixChunks) continue;
    const ms = costs.loadMsPerChunk[p.tiers[i] as DirectoryTier] + costs.peerMsPerChunk;
    if (!best || ms < best.ms || (ms === best.ms && p.nodeId < best.nodeId)) best = { nodeId: p.nodeId, ms };
  }
  return best;
}

/** Chunks past the chosen node's own prefix that a peer serves faster than recomputing, grouped by peer. */
function sourcesFor(nodeId: string, req: RouteRequest, prefixes: ReadonlyMap<string, NodePrefix>, costs: RoutingCosts): KvSourcePlan[] {
  const local = prefixes.get(nodeId)?.prefixChunks ?? 0;
  const byPeer = new Map<string, string[]>();
  for (let i = local; i < req.chunkKeys.length; i++) {
    const peer = bestPeer(i, nodeId, prefixes, costs);
    if (!peer || peer.ms >= costs.recomputeMsPerChunk) continue;
    const keys = byPeer.get(peer.nodeId) ?? [];
    keys.push(req.chunkKeys[i]!);
    byPeer.set(peer.nodeId, keys);
  }
  return [...byPeer].map(([peerId, chunkKeys]) => ({ nodeId: peerId, chunkKeys }));
}

/** Lowest score; ties to the lower load, then the smaller node id (code-unit order). */
function pick<T extends RouteCandidate>(nodes: readonly T[], score: (n: T) => number, costs: RoutingCosts): T {
  let best = nodes[0]!;
  let bestScore = score(best);
  for (const n of nodes.slice(1)) {
    const s = score(n);
    const tie =
      s === bestScore &&
      (reservedLoad(n, costs) < reservedLoad(best, costs) ||
        (reservedLoad(n, costs) === reservedLoad(best, costs) && n.nodeId < best.nodeId));
    if (s < bestScore || tie) {
      best = n;
      bestScore = s;
    }
  }
  return best;
}
