import type { DirectoryTier, NodePrefix } from '../directory/kv-directory.types.js';
import { CHUNK_TOKENS } from '../keys/chunk.constants.js';
import { deviceChunks } from './device-prefix.js';
import { costsOf } from './node.costs.js';
import { recomputeSpanMs } from './prefill.cost.js';
import { pickLowest, queueAheadMs } from './route.load.js';
import type { CandidateEstimate, KvSourcePlan, RouteCandidate, RouteDecision, RouteRequest, RoutingCosts } from './route.types.js';

/**
 * Symphony's routing: a live reservation is honoured unless another node's estimate beats the
 * reserved node's by more than `moveMarginMs` (the announced request arrived to find it busy);
 * otherwise each node's estimated time to first token — its queue, plus per chunk the cheapest
 * of a local tier, a peer fetch or recomputing, plus, away from the session's home, the partial
 * last chunk only the home holds — is compared, so KV placement only wins while it saves more
 * than the extra queueing costs; a session leaves its live home only for a gain above
 * `moveMarginMs`. Each candidate is priced with what it measured of itself (costsOf); the
 * decision carries every candidate's estimate and why the choice was made:
 * - `reservation` / `session_home`: the session stayed where its advisory or its last turn put it;
 * - `moved_queue`: it left that node because the node's queue made it slower;
 * - `moved_kv`: it left because another node has its KV closer (the home lost it);
 * - `cheapest`: no live home or reservation: the lowest estimate.
 */
export function symphony(serving: readonly RouteCandidate[], req: RouteRequest, costs: RoutingCosts): RouteDecision {
  const reserved = serving.find((n) => n.nodeId === req.reservedNode);
  const prefixes = new Map(req.prefixes.map((p) => [p.nodeId, p]));
  const homeAlive = serving.some((n) => n.nodeId === req.sessionHome);
  const measured = new Map(serving.map((n) => [n.nodeId, costsOf(n.costs, costs)]));
  // The reserved node's reservation for this session is this request: no load in front of it.
  const own = (n: RouteCandidate) => (n === reserved && n.reservations > 0 ? { ...n, reservations: n.reservations - 1 } : n);
  const pricing: Pricing = { req, prefixes, measured, base: costs };
  const priced = serving.map((n) => pricedEstimate(own(n), pricing, homeAlive));
  const candidates = priced.map((p) => p.estimate);
  const of = (n: RouteCandidate) => candidates[serving.indexOf(n)]!;
  const best = pickLowest(serving, (n) => of(n).totalMs, costs);
  const decide = (n: RouteCandidate, reason: RouteDecision['reason']): RouteDecision => ({
    nodeId: n.nodeId,
    reason,
    kvSources: sourcesOf(priced[serving.indexOf(n)]!.run, req),
    estimateMs: of(n).totalMs,
    candidates,
  });
  // The reservation prefetched this session's KV there, so its estimate already counts that KV
  // as local: it loses only to a node that is clearly faster now, as a session's home does.
  if (reserved && of(best).totalMs + costs.moveMarginMs >= of(reserved).totalMs) return decide(reserved, 'reservation');
  const home = homeAlive ? serving.find((n) => n.nodeId === req.sessionHome) : undefined;
  if (home && (home === best || of(best).totalMs + costs.moveMarginMs >= of(home).totalMs)) return decide(home, 'session_home');
  const left = reserved ?? home;
  if (!left) return decide(best, 'cheapest');
  return decide(best, of(left).queueMs > of(best).queueMs ? 'moved_queue' : 'moved_kv');
}

/**
 * Estimated time to first token on `n` (see {@link symphony}): the wait before its prefill starts
 * (queueAheadMs: queued requests and backlog, and a slot when its batch is full), and having the
 * prompt's KV — per chunk the cheapest way, plus, on any node but a live session home, the
 * tokens past the last whole chunk: loading the partial chunk the session left from its own tiers
 * or a peer's where one holds it (the cheapest), else recomputing them (only the home has them cached).
 */
export function estimateParts(
  n: RouteCandidate,
  req: RouteRequest,
  prefixes: ReadonlyMap<string, NodePrefix>,
  measured: ReadonlyMap<string, RoutingCosts>,
  base: RoutingCosts,
  homeAlive = true,
): CandidateEstimate {
  return pricedEstimate(n, { req, prefixes, measured, base }, homeAlive).estimate;
}

/** What pricing a request needs: the request, who holds its prefix, and each node's costs (the configured ones where it measured none). */
interface Pricing {
  readonly req: RouteRequest;
  readonly prefixes: ReadonlyMap<string, NodePrefix>;
  readonly measured: ReadonlyMap<string, RoutingCosts>;
  readonly base: RoutingCosts;
}

/** How a node comes to hold a prompt's KV: its cost, and the peer whose chunks [from, end) it fetches, if any. */
interface Run {
  readonly ms: number;
  readonly peer?: string;
  readonly from: number;
  readonly end: number;
}

/** {@link estimateParts} with the run it priced, so the chosen node's sources are the ones its estimate assumed. */
function pricedEstimate(n: RouteCandidate, p: Pricing, homeAlive: boolean): { estimate: CandidateEstimate; run: Run } {
  const c = p.measured.get(n.nodeId) ?? p.base;
  const queueMs = queueAheadMs(n, c);
  const run = kvRun(n.nodeId, p);
  let kvMs = run.ms;
  if (homeAlive && p.req.sessionHome !== undefined && n.nodeId !== p.req.sessionHome) kvMs += tailCost(n.nodeId, p.req, p.measured, p.base);
  return { estimate: { nodeId: n.nodeId, queueMs, kvMs, totalMs: queueMs + kvMs }, run };
}

/** The total of {@link estimateParts} with the configured costs for every node (the twin's and the specs' shorthand). */
export function estimate(
  n: RouteCandidate,
  req: RouteRequest,
  prefixes: ReadonlyMap<string, NodePrefix>,
  costs: RoutingCosts,
  homeAlive = true,
): number {
  return estimateParts(n, req, prefixes, new Map(), costs, homeAlive).totalMs;
}

function tailCost(nodeId: string, req: RouteRequest, measured: ReadonlyMap<string, RoutingCosts>, base: RoutingCosts): number {
  const c = measured.get(nodeId) ?? base;
  const whole = req.chunkKeys.length;
  let best = recomputeSpanMs(c, whole, whole + tailTokens(req) / CHUNK_TOKENS);
  for (const h of req.partialHolders ?? []) {
    const read = (measured.get(h.nodeId) ?? base).loadMsPerChunk[h.tier];
    const ms = read + (h.nodeId === nodeId ? 0 : c.peerMsPerChunk);
    if (ms < best) best = ms;
  }
  return best;
}

/** Prompt tokens past the last whole chunk (0 when the prompt length is not known). */
function tailTokens(req: RouteRequest): number {
  return req.promptTokens === undefined ? 0 : Math.max(0, req.promptTokens - req.chunkKeys.length * CHUNK_TOKENS);
}

/**
 * What having the prompt's KV costs `puller`, and the peer run it fetches, if any. A node
 * restores past what its device holds from either its own tiers or one peer, never both in one
 * pass (choosePeerPrefix: a peer helps only with an unbroken run from the first chunk the device
 * lacks). So the two ways are priced apart and the cheaper kept: its own tiers' chunks, then
 * recomputing; or one peer's run from the first chunk the device lacks (the chunks its own host
 * or SSD holds included), then recomputing. Pricing its own tiers' chunks and then a peer's run
 * past them asked for a restore the node cannot make: in the twin's replica of the live cluster,
 * a session back on a node holding its older turns on host was sent the newer chunks from its
 * last node, and the node, whose device lacked the first of them, recomputed 6,300 tokens.
 */
function kvRun(puller: string, p: Pricing): Run {
  const { req } = p;
  const c = p.measured.get(puller) ?? p.base;
  const own = p.prefixes.get(puller);
  const held = Math.min(own?.prefixChunks ?? 0, req.chunkKeys.length);
  const device = Math.min(deviceChunks(own), held);
  const read = (a: number, b: number) => {
    let ms = 0;
    for (let i = a; i < b; i++) ms += c.loadMsPerChunk[own!.tiers[i]!];
    return ms;
  };
  const onDevice = read(0, device);
  const fromTiers = { ms: onDevice + read(device, held) + recomputeSpanMs(c, held, req.chunkKeys.length), from: held, end: held };
  const peer = peerRun(puller, device, p);
  const fromPeer = { ...peer, ms: onDevice + peer.ms };
  return fromPeer.peer !== undefined && fromPeer.ms < fromTiers.ms ? fromPeer : fromTiers;
}

/**
 * The cheapest of recomputing the chunks from `from` on and fetching one peer's run of them:
 * each peer is priced over its run, cut where fetching stops paying against recomputing.
 * Pricing each chunk at its own cheapest peer instead sent two peers a node never combines: it
 * fetched the first one's few chunks and recomputed the rest.
 */
function peerRun(puller: string, from: number, { req, prefixes, measured, base }: Pricing): Run {
  const c = measured.get(puller) ?? base;
  const total = req.chunkKeys.length;
  const recompute = recomputeSpanMs(c, from, total);
  let best: Run = { ms: recompute, from, end: from };
  if (!Number.isFinite(c.peerMsPerChunk)) return best;
  for (const p of prefixes.values()) {
    if (p.nodeId === puller || p.prefixChunks <= from) continue;
    const read = (measured.get(p.nodeId) ?? base).loadMsPerChunk;
    // Fetching [from, end) and recomputing [end, total): the end with the lowest total on this peer.
    let [saved, bestSaved, end] = [0, 0, from];
    for (let i = from; i < Math.min(p.prefixChunks, total); i++) {
      saved += recomputeSpanMs(c, i, i + 1) - (read[p.tiers[i] as DirectoryTier] + c.peerMsPerChunk);
      if (saved > bestSaved) [bestSaved, end] = [saved, i + 1];
    }
    const ms = recompute - bestSaved;
    // Ties to the smaller node id, so scheduler replicas agree; recomputing keeps a tie with any peer.
    if (ms < best.ms || (ms === best.ms && best.peer !== undefined && p.nodeId < best.peer)) best = { ms, peer: p.nodeId, from, end };
  }
  return best;
}

/** The chosen node's one peer source (see {@link kvRun}): the run of chunks, from the first its device lacks, that it should fetch. */
function sourcesOf(run: Run, req: RouteRequest): KvSourcePlan[] {
  if (run.peer === undefined) return [];
  return [{ nodeId: run.peer, chunkKeys: req.chunkKeys.slice(run.from, run.end) }];
}
