import { Inject, Injectable, Optional } from '@nestjs/common';
import { BLOCKS_PER_CHUNK, CHUNK_TOKENS, chunkBlockKeys, chunkKeys, longestPartial, type ExpectedHoldings, partialSource, route, routeKeysFor, withECacheKeys, withPartialSource, type ChunkHolding, type KvDirectory, type NodePrefix, type Reservation, type ReservationBook, type RouteDecision, type RoutingCosts, type RoutingPolicyName, type SessionTable } from '@mnemo/kv-core';
import { CLOCK, type Clock } from '@mnemo/service-kit';
import type { InferenceRequest } from '@mnemo/proto';
import { routingCosts, SCHEDULER_CONFIG, type SchedulerConfig } from '../config/scheduler.config.js';
import { DERIVED_PAIRS, DerivedPairsRegistry } from '../droidspeak/derived-pairs.registry.js';
import { EXPECTED_HOLDINGS, KV_DIRECTORY } from '../kv-directory/kv-report.port.js';
import { NodeRegistry } from '../nodes/node.registry.js';
import { RESERVATION_BOOK, SESSION_TABLE } from '../sessions/session-table.provider.js';
import { SchedulerMetrics } from '../shared/scheduler.metrics.js';

/** A routing decision with the peers' addresses filled in, ready to stamp on the request. */
export interface PlannedRoute extends RouteDecision {
  readonly kvSourceAddresses: ReadonlyMap<string, string>;
  /** The session's live reservation when there was one (honoured or not, by the policy). */
  readonly reservation?: Reservation;
  /** Estimated prefill on the chosen node, ms: the prompt past what it holds or is sent to fetch. */
  readonly prefillMs: number;
}

/**
 * Gathers what the configured policy (kv-core `route`) needs — live nodes with their advisory
 * reservations, where the request's prefix lives (KV directory, plus what was just routed and
 * not reported yet: kv-core `ExpectedHoldings`), the session's previous node and live
 * reservation — and asks it for a node. A request without a known session whose prompt extends
 * one just routed takes that prompt's node as its session home: a back-to-back turn sent
 * without a session id stays with its KV unless another node is clearly faster.
 */
@Injectable()
export class RoutePlanner {
  readonly policy: RoutingPolicyName;
  private readonly costs: RoutingCosts;

  constructor(
    @Inject(NodeRegistry) private readonly registry: NodeRegistry,
    @Inject(KV_DIRECTORY) private readonly directory: KvDirectory,
    @Inject(SESSION_TABLE) private readonly sessions: SessionTable,
    @Inject(RESERVATION_BOOK) private readonly book: ReservationBook,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(SchedulerMetrics) private readonly metrics: SchedulerMetrics,
    @Inject(SCHEDULER_CONFIG) config: SchedulerConfig,
    @Optional() @Inject(DERIVED_PAIRS) private readonly pairs: DerivedPairsRegistry = new DerivedPairsRegistry(),
    @Optional() @Inject(EXPECTED_HOLDINGS) private readonly expected: ExpectedHoldings | null = null,
  ) {
    this.policy = config.SCHEDULER_POLICY as RoutingPolicyName;
    this.costs = routingCosts(config);
  }

  /** Null when no live node outside `exclude` serves the model. */
  plan(request: InferenceRequest, exclude: ReadonlySet<string>): PlannedRoute | null {
    const now = this.clock.unixMs();
    const nodes = this.registry
      .all()
      .filter((n) => !exclude.has(n.nodeId))
      .map((n) => ({ ...n, reservations: this.book.onNode(n.nodeId, now), backlogMs: this.registry.backlogOf(n.nodeId, now) }));
    const session = request.sessionId ? this.sessions.get(request.tenant, request.sessionId) : undefined;
    const reservation = request.sessionId ? this.book.forSession(request.tenant, request.sessionId, now) : undefined;
    const lookup = this.expectedLookup(now);
    const keys = this.keysFor(request, lookup.holders);
    const partial = keys.chain === 'base' ? null : this.partialOf(request);
    const recorded = session || !this.expected ? null : this.expected.longestRecordedPrompt(request.model, request.tenant, request.tokens, request.chunkKeys, now);
    if (this.expected) this.metrics.expectedLookups.inc({ outcome: recorded || lookup.used() ? 'hit' : 'miss' });
    const routed = route(
      this.policy,
      nodes,
      {
        model: request.model,
        chunkKeys: keys.chunkKeys,
        prefixes: keys.prefixes,
        sessionHome: session?.nodeId ?? recorded?.nodeId,
        reservedNode: reservation?.nodeId,
        promptTokens: request.tokens.length,
        ...(partial ? { partialHolders: partial.held } : {}),
      },
      this.costs,
    );
    if (!routed) return null;
    // Routed on the base's chain: the peers holding the base's KV also say which of its E caches they hold.
    const decision =
      keys.chain === 'base'
        ? { ...routed, kvSources: withECacheKeys(routed.kvSources, keys.chunkKeys, this.pairs.eLayers(request.model), (k) => this.directory.prefixes(k)) }
        : this.withPartial(routed, partial);
    this.metrics.routingDecisions.inc({ policy: this.policy, reason: decision.reason });
    const kvSourceAddresses = new Map(decision.kvSources.map((s) => [s.nodeId, this.registry.get(s.nodeId)?.grpcAddress ?? '']));
    const prefillMs = this.prefillMs(request, decision, keys.prefixes);
    return reservation ? { ...decision, kvSourceAddresses, reservation, prefillMs } : { ...decision, kvSourceAddresses, prefillMs };
  }

  /**
   * What the chosen node will prefill, priced like a recompute: the prompt past the chunks it
   * holds in some tier or is sent to fetch (an estimate: a session's home also holds its partial
   * chunk on the device, which the directory does not list).
   */
  private prefillMs(request: InferenceRequest, decision: RouteDecision, prefixes: readonly NodePrefix[]): number {
    const local = prefixes.find((p) => p.nodeId === decision.nodeId)?.prefixChunks ?? 0;
    const fetched = decision.kvSources.reduce((n, s) => n + s.chunkKeys.length, 0);
    const covered = Math.min(request.tokens.length, (local + fetched) * CHUNK_TOKENS);
    return ((request.tokens.length - covered) / CHUNK_TOKENS) * this.costs.recomputeMsPerChunk;
  }

  /**
   * The longest partial chunk of the prompt's tail some node holds (symphony with peer fetch
   * only): symphony prices a move with it and passes on where it is.
   */
  private partialOf(request: InferenceRequest): { key: string; held: readonly ChunkHolding[] } | null {
    if (this.policy !== 'symphony' || !Number.isFinite(this.costs.peerMsPerChunk)) return null;
    const { model, tenant, tokens, chunkKeys: keys } = request;
    let candidates: string[][];
    try {
      // The chunk the prompt ends in, then the one before it (a previous turn may have left it partial).
      candidates = [keys.length, keys.length - 1].filter((c) => c >= 0).map((c) => chunkBlockKeys(model, tenant, tokens, keys, c).slice(0, BLOCKS_PER_CHUNK - 1));
    } catch {
      // Chunk keys that do not fit the tokens: the node refuses the request anyway.
      return null;
    }
    return longestPartial(candidates, (k) => this.directory.holders(k));
  }

  /** Symphony passes on where the partial chunk the session left is, so a node the session moves to fetches it instead of recomputing it. */
  private withPartial(routed: RouteDecision, partial: { key: string; held: readonly ChunkHolding[] } | null): RouteDecision {
    const source = partialSource(routed.nodeId, partial);
    return source ? { ...routed, kvSources: withPartialSource(routed.kvSources, source) } : routed;
  }

  /** The directory's hook for what was just routed (none when expected holdings are off), and whether it found any. */
  private expectedLookup(now: number): { holders?: (key: string) => readonly string[]; used: () => boolean } {
    const expected = this.expected;
    if (!expected) return { used: () => false };
    let found = false;
    const holders = (key: string) => {
      const nodes = expected.holders(key, now);
      found ||= nodes.length > 0;
      return nodes;
    };
    return { holders, used: () => found };
  }

  /** A derived model's request is routed on its base's chunks (same tokens and tenant salt) when they reach further (kv-core `routeKeysFor`). */
  private keysFor(request: InferenceRequest, expected?: (key: string) => readonly string[]) {
    const own = { chunkKeys: request.chunkKeys, prefixes: this.directory.prefixes(request.chunkKeys, expected) };
    const base = this.pairs.baseOf(request.model);
    if (!base) return routeKeysFor(own);
    let baseKeys: string[];
    try {
      baseKeys = chunkKeys(base, request.tenant, request.tokens);
    } catch {
      // Token ids the node would refuse anyway: route on the request's own chain.
      return routeKeysFor(own);
    }
    return routeKeysFor(own, { chunkKeys: baseKeys, prefixes: this.directory.prefixes(baseKeys, expected) });
  }
}
