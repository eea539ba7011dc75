import { Inject, Injectable, Optional } from '@nestjs/common';
import {
  planAdvisory,
  planRoute,
  type AdvisoryAsk,
  type AdvisoryPlan,
  type ExpectedHoldings,
  type KvDirectory,
  type PlannedRoute as RoutePlan,
  type ReservationBook,
  type RoutedRequest,
  type RoutingCosts,
  type RoutingPolicyName,
  type RoutingState,
  type SessionRecord,
  type SessionTable,
} from '@mnemo/kv-core';
import { CLOCK, type Clock } from '@mnemo/service-kit';
import type { InferenceRequest } from '@mnemo/proto';
import { routingCosts, SCHEDULER_CONFIG, type SchedulerConfig } from '../config/scheduler.config.js';
import { DERIVED_PAIRS, DerivedPairsRegistry } from '../droidspeak/derived-pairs.registry.js';
import { EXPECTED_HOLDINGS, KV_DIRECTORY } from '../kv-directory/kv-report.port.js';
import { NodeRegistry } from '../nodes/node.registry.js';
import { RESERVATION_BOOK, SESSION_TABLE } from '../sessions/session-table.provider.js';
import { SchedulerMetrics } from '../shared/scheduler.metrics.js';

/** A routing decision (kv-core planRoute) with the peers' addresses filled in, ready to stamp on the request. */
export interface PlannedRoute extends RoutePlan {
  readonly kvSourceAddresses: ReadonlyMap<string, string>;
}

/**
 * The scheduler's routing: kv-core `planRoute` over this scheduler's soft state — live nodes
 * with their advisory reservations and prefill backlog, where the request's prefix lives (KV
 * directory, plus what was just routed and not reported yet: kv-core `ExpectedHoldings`), the
 * session's previous node and live reservation, the DroidSpeak pairs. A request without a known
 * session whose prompt extends one just routed takes that prompt's node as its session home: a
 * back-to-back turn sent without a session id stays with its KV unless another node is clearly
 * faster. The twin routes with the same function.
 */
@Injectable()
export class RoutePlanner {
  readonly policy: RoutingPolicyName;
  private readonly costs: RoutingCosts;
  /** Price each node with what it measured of itself (SCHEDULER_MEASURED_COSTS). */
  private readonly measured: boolean;

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
    this.measured = config.SCHEDULER_MEASURED_COSTS !== 'off';
  }

  /** Null when no live node outside `exclude` serves the model. */
  plan(request: InferenceRequest, exclude: ReadonlySet<string>): PlannedRoute | null {
    const now = this.clock.unixMs();
    const lookup = this.expectedLookup(now);
    let recorded = false;
    const state: RoutingState = {
      ...this.reportedState(),
      prefixes: (keys) => this.directory.prefixes(keys, lookup.holders),
      reportedPrefixes: (keys) => this.directory.prefixes(keys),
      baseOf: (model) => this.pairs.baseOf(model),
      eLayers: (model) => this.pairs.eLayers(model),
      ...(this.expected
        ? {
            recordedHome: (r: RoutedRequest, at: number) => {
              const match = this.expected!.longestRecordedPrompt(r.model, r.tenant, r.tokens, r.chunkKeys, at);
              recorded = match !== null;
              return match?.nodeId;
            },
          }
        : {}),
    };
    const decision = planRoute(state, this.registry.routable(this.measured), request, exclude, now);
    if (this.expected) this.metrics.expectedLookups.inc({ outcome: recorded || lookup.used() ? 'hit' : 'miss' });
    if (!decision) return null;
    this.metrics.routeReasons.inc({ policy: this.policy, reason: decision.reason });
    const kvSourceAddresses = new Map(decision.kvSources.map((src) => [src.nodeId, this.registry.get(src.nodeId)?.grpcAddress ?? '']));
    return { ...decision, kvSourceAddresses };
  }

  /**
   * Where a session's next request should go when it arrives (kv-core `planAdvisory`), over what
   * the nodes reported: nothing of that request is routed yet, and advisories are not DroidSpeak
   * aware. Null when no live node serves the model.
   */
  advise(session: SessionRecord, ask: AdvisoryAsk, now: number, maxAheadMs: number): AdvisoryPlan | null {
    return planAdvisory(this.reportedState(), this.registry.routable(this.measured), session, ask, now, maxAheadMs);
  }

  /** What every decision reads: the policy and its costs, the holdings nodes reported, reservations, backlogs, sessions. */
  private reportedState(): RoutingState {
    return {
      policy: this.policy,
      costs: this.costs,
      prefixes: (keys) => this.directory.prefixes(keys),
      holders: (key) => this.directory.holders(key),
      reservationsOn: (id, at) => this.book.onNode(id, at),
      backlogMs: (id, at) => this.registry.backlogOf(id, at),
      session: (tenant, id) => this.sessions.get(tenant, id),
      reservation: (tenant, id, at) => this.book.forSession(tenant, id, at),
    };
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
}
