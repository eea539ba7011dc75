import { BLOCKS_PER_CHUNK, CHUNK_TOKENS } from '../keys/chunk.constants.js';
import { chunkBlockKeys } from '../keys/block-key.chain.js';
import { chunkKeys as chunkKeysOf } from '../keys/chunk-key.hasher.js';
import type { ChunkHolding, NodePrefix } from '../directory/kv-directory.types.js';
import { routeKeysFor, withECacheKeys } from '../reuse/base-prefix.route.js';
import type { Reservation } from '../sessions/reservation.book.js';
import type { SessionRecord } from '../sessions/session.table.js';
import { reportedPrefillMs, type NodeLoad } from './node-load.js';
import { longestPartial, partialSource, withPartialSource } from './partial-source.policy.js';
import { costsOf } from './node.costs.js';
import { recomputeSpanMs } from './prefill.cost.js';
import { route } from './route.policies.js';
import type { KvSourcePlan, RouteCandidate, RouteDecision, RoutingCosts, RoutingPolicyName } from './route.types.js';

/** Where the scheduler's soft state answers routing's questions (its KV directory, session table, reservation book, backlog). */
export interface RoutingState {
  readonly policy: RoutingPolicyName;
  readonly costs: RoutingCosts;
  /** Per node, the leading keys of a chain it holds (KvDirectory.prefixes, with what was just routed there: ExpectedHoldings). */
  prefixes(keys: readonly string[]): NodePrefix[];
  /** The directory alone (what nodes reported): where E caches are looked for. Default: `prefixes`. */
  reportedPrefixes?(keys: readonly string[]): NodePrefix[];
  /**
   * For a request with no known session: the node a prompt it extends was just routed to
   * (ExpectedHoldings.longestRecordedPrompt), taken as its session home.
   */
  recordedHome?(request: RoutedRequest, nowMs: number): string | undefined;
  /** Holders of one key (KvDirectory.holders). */
  holders(key: string): ChunkHolding[];
  /** Live advisory reservations on a node that still count as coming load (ReservationBook.onNode). */
  reservationsOn(nodeId: string, nowMs: number): number;
  /** Prefill work sent to a node not worked through by `atMs` (PrefillBacklog.get). */
  backlogMs(nodeId: string, atMs: number): number;
  /** A session's record (SessionTable.get). */
  session(tenant: string, sessionId: string): SessionRecord | undefined;
  /** A session's live reservation (ReservationBook.forSession). */
  reservation(tenant: string, sessionId: string, nowMs: number): Reservation | undefined;
  /** DroidSpeak: the base model a derived model's requests may be routed on, and its E-cache layers. */
  baseOf?(model: string): string | undefined;
  eLayers?(model: string): readonly number[];
}

/** A request as routing sees it. */
export interface RoutedRequest {
  readonly model: string;
  readonly tenant: string;
  readonly sessionId: string;
  readonly tokens: readonly number[];
  readonly chunkKeys: readonly string[];
  /** The prompt's block keys by chunk (chunkBlockKeys), when the caller has them hashed already. */
  blockKeys?(chunk: number): readonly string[];
}

/** A routing decision for one request, with what the scheduler does next with it. */
export interface PlannedRoute extends RouteDecision {
  /** The session's live reservation when there was one (honoured or not by the policy). */
  readonly reservation?: Reservation;
  /** Estimated prefill on the chosen node, ms: the prompt past what it holds or is sent to fetch (the backlog it adds). */
  readonly prefillMs: number;
}

/**
 * Routes one request (the scheduler's RoutePlanner): the live nodes outside `exclude` with their
 * reservations and prefill backlog, where the prefix lives (on the request's own chain, or its
 * base model's when that reaches further), the session's home and live reservation, and — for
 * symphony with peer fetch — who holds the partial chunk of its tail. Null when no candidate
 * serves the model.
 */
export function planRoute(
  s: RoutingState,
  nodes: readonly NodeLoad[],
  request: RoutedRequest,
  exclude: ReadonlySet<string>,
  nowMs: number,
): PlannedRoute | null {
  const candidates: RouteCandidate[] = nodes
    .filter((n) => !exclude.has(n.nodeId))
    .map((n) => ({
      ...n,
      // Other sessions' reservations are requests still being typed, due seconds from now: not
      // ahead of this one, which runs now. They are load where they are due, in the advisory's
      // estimate at its expected arrival (planAdvisory). Counted here too, they made a node with
      // several users typing look a queued request busier each and sent requests away from homes
      // that were idle (in the twin's replica of the live cluster, symphony's p99 over five seeds
      // fell from above conductor's to level with it, and its mean below conductor's in each).
      reservations: 0,
      // What the scheduler sent, or what the node reports it is still computing, whichever is longer.
      backlogMs: Math.max(s.backlogMs(n.nodeId, nowMs), reportedPrefillMs(n, nowMs)),
    }));
  const session = request.sessionId ? s.session(request.tenant, request.sessionId) : undefined;
  const reservation = request.sessionId ? s.reservation(request.tenant, request.sessionId, nowMs) : undefined;
  const keys = keysFor(s, request);
  const partial = keys.chain === 'base' ? null : partialOf(s, request);
  const home = session?.nodeId ?? s.recordedHome?.(request, nowMs);
  const routed = route(
    s.policy,
    candidates,
    {
      model: request.model,
      chunkKeys: keys.chunkKeys,
      prefixes: keys.prefixes,
      sessionHome: home,
      reservedNode: reservation?.nodeId,
      promptTokens: request.tokens.length,
      ...(partial ? { partialHolders: partial.held } : {}),
    },
    s.costs,
  );
  if (!routed) return null;
  // Routed on the base's chain: the peers holding the base's KV also say which of its E caches they hold.
  const decision =
    keys.chain === 'base'
      ? {
          ...routed,
          kvSources: withECacheKeys(routed.kvSources, keys.chunkKeys, s.eLayers?.(request.model) ?? [], (k) =>
            (s.reportedPrefixes ?? s.prefixes)(k),
          ),
        }
      : withPartial(routed, partial);
  // The backlog it adds, priced with what the chosen node measured of itself: the prompt past what it holds or
  // is sent to fetch, plus loading what it holds in its host/SSD tiers and pulling what it fetches.
  const chosen = candidates.find((n) => n.nodeId === decision.nodeId);
  const c = costsOf(chosen?.costs, s.costs);
  const prefillMs = routePrefillMs(request.tokens.length, decision, keys.prefixes, c) + routeRestoreMs(decision, keys.prefixes, c);
  return reservation ? { ...decision, reservation, prefillMs } : { ...decision, prefillMs };
}

/**
 * What the chosen node will prefill, priced like a recompute: the prompt past the chunks it
 * holds in some tier or is sent to fetch (an estimate: a session's home also holds its partial
 * chunk on the device, which the directory does not list).
 */
export function routePrefillMs(
  promptTokens: number,
  decision: RouteDecision,
  prefixes: readonly NodePrefix[],
  costs: RoutingCosts,
): number {
  const local = prefixes.find((p) => p.nodeId === decision.nodeId)?.prefixChunks ?? 0;
  const fetched = decision.kvSources.reduce((n, src) => n + src.chunkKeys.length, 0);
  const covered = Math.min(promptTokens, (local + fetched) * CHUNK_TOKENS);
  return recomputeSpanMs(costs, covered / CHUNK_TOKENS, promptTokens / CHUNK_TOKENS);
}

/** Loading the chunks the chosen node holds in its host/SSD tiers and pulling those it fetches (each pull priced as from a host tier). */
export function routeRestoreMs(decision: RouteDecision, prefixes: readonly NodePrefix[], costs: RoutingCosts): number {
  const local = prefixes.find((p) => p.nodeId === decision.nodeId);
  let ms = 0;
  for (let i = 0; i < (local?.prefixChunks ?? 0); i++) ms += costs.loadMsPerChunk[local!.tiers[i]!];
  const fetched = decision.kvSources.reduce((n, src) => n + src.chunkKeys.length, 0);
  if (fetched > 0 && Number.isFinite(costs.peerMsPerChunk)) ms += fetched * (costs.loadMsPerChunk.host + costs.peerMsPerChunk);
  return ms;
}

/**
 * The longest partial chunk of the prompt's tail some node holds (symphony with peer fetch
 * only): symphony prices a move with it and passes on where it is.
 */
function partialOf(s: RoutingState, r: RoutedRequest): { key: string; held: readonly ChunkHolding[] } | null {
  if (s.policy !== 'symphony' || !Number.isFinite(s.costs.peerMsPerChunk)) return null;
  let candidates: string[][];
  try {
    // The chunk the prompt ends in, then the one before it (a previous turn may have left it partial).
    candidates = [r.chunkKeys.length, r.chunkKeys.length - 1]
      .filter((c) => c >= 0)
      .map((c) =>
        (r.blockKeys ? r.blockKeys(c) : chunkBlockKeys(r.model, r.tenant, r.tokens, r.chunkKeys, c)).slice(0, BLOCKS_PER_CHUNK - 1),
      );
  } catch {
    // Chunk keys that do not fit the tokens: the node refuses the request anyway.
    return null;
  }
  return longestPartial(candidates, (k) => s.holders(k));
}

/** Symphony passes on where the partial chunk the session left is, so a node the session moves to fetches it instead of recomputing it. */
function withPartial(routed: RouteDecision, partial: { key: string; held: readonly ChunkHolding[] } | null): RouteDecision {
  const source = partialSource(routed.nodeId, partial);
  return source ? { ...routed, kvSources: withPartialSource(routed.kvSources, source) } : routed;
}

/** A derived model's request is routed on its base's chunks (same tokens and tenant salt) when they reach further (routeKeysFor). */
function keysFor(s: RoutingState, r: RoutedRequest) {
  const own = { chunkKeys: r.chunkKeys, prefixes: s.prefixes(r.chunkKeys) };
  const base = s.baseOf?.(r.model);
  if (!base) return routeKeysFor(own);
  let baseKeys: string[];
  try {
    baseKeys = chunkKeysOf(base, r.tenant, r.tokens);
  } catch {
    // Token ids the node would refuse anyway: route on the request's own chain.
    return routeKeysFor(own);
  }
  return routeKeysFor(own, { chunkKeys: baseKeys, prefixes: s.prefixes(baseKeys) });
}

/** An advisory as the scheduler takes it: the session's next request is expected at `expectedArrivalMs` (0: now). */
export interface AdvisoryAsk {
  readonly tenant: string;
  readonly sessionId: string;
  readonly model: string;
  readonly expectedArrivalMs: number;
}

/** Where an advisory reserves, and what the reserved node is asked to prefetch. */
export interface AdvisoryPlan {
  readonly nodeId: string;
  /** When the request is expected (clamped to [now, now + maxAheadMs]). */
  readonly arrivalMs: number;
  /** The session's chain to prefetch: its whole chunks, then the partial chunk's key when a peer passes it on. */
  readonly chunkKeys: readonly string[];
  /** Peers the reserved node fetches them from (empty when peers cannot serve them). */
  readonly sources: readonly KvSourcePlan[];
}

/**
 * Symphony §3.3 advisory (the scheduler's AdviseUseCase): the node is chosen now by the
 * configured policy over the session's last chunk keys, with the prefill backlog as it will be
 * at the expected arrival, and the partial chunk the session left priced like a request's tail;
 * the reserved node is then told where the session's chunks live, priced for it alone. Null when
 * no candidate serves the model.
 */
export function planAdvisory(
  s: RoutingState,
  nodes: readonly NodeLoad[],
  session: SessionRecord,
  ask: AdvisoryAsk,
  nowMs: number,
  maxAheadMs: number,
): AdvisoryPlan | null {
  const arrivalMs = ask.expectedArrivalMs > 0 ? Math.min(Math.max(ask.expectedArrivalMs, nowMs), nowMs + maxAheadMs) : nowMs;
  // The backlog as it will be when the request arrives: a long prefill a node took a moment ago
  // is no reason to move a session that arrives seconds later.
  const candidates: RouteCandidate[] = nodes.map((n) => ({
    ...n,
    reservations: s.reservationsOn(n.nodeId, nowMs),
    backlogMs: s.backlogMs(n.nodeId, arrivalMs),
  }));
  const prefixes = s.prefixes(session.chunkKeys);
  const partial = sessionPartial(s, session.partialKey);
  const choice = route(
    s.policy,
    candidates,
    {
      model: ask.model,
      chunkKeys: session.chunkKeys,
      prefixes,
      sessionHome: session.nodeId,
      promptTokens: session.promptTokens,
      ...(partial ? { partialHolders: partial.held } : {}),
    },
    s.costs,
  );
  if (!choice) return null;
  // Priced for the reserved node alone: with others beside it, a busier reserved node would lose to them.
  const reserved = candidates.filter((n) => n.nodeId === choice.nodeId);
  const plan = route(
    'symphony',
    reserved,
    { model: ask.model, chunkKeys: session.chunkKeys, prefixes, reservedNode: choice.nodeId },
    s.costs,
  );
  // The partial chunk is the chunk after the whole ones: its index in chunk_keys is its position.
  const tail = plan && Number.isFinite(s.costs.peerMsPerChunk) ? partialSource(choice.nodeId, partial) : null;
  const sources = plan ? (tail ? withPartialSource(plan.kvSources, tail) : plan.kvSources) : [];
  return { nodeId: choice.nodeId, arrivalMs, chunkKeys: tail ? [...session.chunkKeys, tail.key] : [...session.chunkKeys], sources };
}

/** Who holds the session's partial chunk in a host or SSD tier (a device keeps none by name); null when nobody does. */
function sessionPartial(s: RoutingState, key: string | undefined): { key: string; held: readonly ChunkHolding[] } | null {
  if (!key) return null;
  const held = s.holders(key).filter((h) => h.tier !== 'device');
  return held.length > 0 ? { key, held } : null;
}
