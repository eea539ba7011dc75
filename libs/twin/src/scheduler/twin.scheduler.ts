import {
  ExpectedHoldings,
  expectedPrompt,
  KvDirectory,
  planAdvisory,
  planRoute,
  PrefillBacklog,
  ReservationBook,
  reservationPrefetchAfter,
  SessionTable,
  type DirectoryChange,
  type ExpectedRecord,
  type NodeLoad,
  type Reservation,
  type RoutingCosts,
  type RoutingPolicyName,
  type RoutingState,
} from '@mnemo/kv-core';
import type { HoldingChange, TwinSessionTail } from '../node/node-kv.js';
import type { TwinKvSource, TwinRequest } from '../node/twin-seq.js';
import type { TwinNodeLoad } from '../node/twin-node.config.js';

/** What SCHEDULER_* sets on a live scheduler. */
export interface TwinSchedulerConfig {
  readonly policy: RoutingPolicyName;
  /** Symphony's cost model (routingCosts of the scheduler's config; peerMsPerChunk Infinity: no peer fetch). */
  readonly costs: RoutingCosts;
  readonly maxHoldings: number;
  readonly maxSessions: number;
  readonly advisoryTtlMs: number;
  readonly advisoryOverdueMs: number;
  readonly advisoryMaxAheadMs: number;
  readonly advisoriesPerTenant: number;
  readonly advisoriesMax: number;
  /** Expected holdings (SCHEDULER_EXPECTED_HOLDINGS_MAX, 0 = off) and their TTL. */
  readonly expectedMax: number;
  readonly expectedTtlMs: number;
  /** SCHEDULER_MEASURED_COSTS: price each node with the costs it measured of itself (default true). */
  readonly measuredCosts?: boolean;
}

export const DEFAULT_TWIN_SCHEDULER: Omit<TwinSchedulerConfig, 'policy' | 'costs'> = {
  maxHoldings: 1_000_000,
  maxSessions: 100_000,
  advisoryTtlMs: 30_000,
  advisoryOverdueMs: 5_000,
  advisoryMaxAheadMs: 300_000,
  advisoriesPerTenant: 1_000,
  advisoriesMax: 100_000,
  expectedMax: 100_000,
  expectedTtlMs: 30_000,
};

/**
 * The scheduler's answer to one request: where it goes (with its kv_sources), what the node will prefill, and the reservation it arrived
 * on.
 */
export interface TwinDispatch {
  readonly nodeId: string;
  readonly kvSources: readonly TwinKvSource[];
  readonly prefillMs: number;
  readonly reservation?: Reservation;
  /** What routing recorded as expected on the node (taken back if the dispatch fails). */
  readonly expected?: ExpectedRecord;
}

/**
 * An advisory's outcome: the reservation, what the reserved node prefetches from whom, and a replaced reservation's node to tell to forget.
 */
export interface TwinAdvisory {
  readonly reservation: Reservation;
  readonly chunkKeys: readonly string[];
  readonly sources: readonly TwinKvSource[];
  readonly forget?: { readonly nodeId: string; readonly advisoryId: string };
}

/**
 * The scheduler in virtual time: its soft state is kv-core's (KvDirectory, SessionTable,
 * ReservationBook, PrefillBacklog), its decisions kv-core's planRoute and planAdvisory; what it
 * knows of nodes comes from their heartbeats and KV events, as late as the messages carrying
 * them, plus the dispatches it made since (pending and backlog).
 */
export class TwinScheduler {
  readonly directory: KvDirectory;
  readonly sessions: SessionTable;
  readonly book: ReservationBook;
  readonly expected: ExpectedHoldings | null;
  private readonly backlog = new PrefillBacklog();
  private readonly nodes = new Map<string, NodeLoad>();
  private sorted: NodeLoad[] = [];
  private advisoryIds = 0;
  /** The time of the call being served (the expected-holdings hook reads it). */
  private now = 0;
  private readonly state: RoutingState;
  readonly counters = { routed: 0, reasons: {} as Record<string, number>, advisories: 0, reservationsHit: 0, reservationsMoved: 0 };

  constructor(readonly config: TwinSchedulerConfig) {
    this.directory = new KvDirectory(config.maxHoldings);
    this.sessions = new SessionTable(config.maxSessions);
    this.book = new ReservationBook({ perTenant: config.advisoriesPerTenant, total: config.advisoriesMax }, config.advisoryOverdueMs);
    this.expected = config.expectedMax > 0 ? new ExpectedHoldings(config.expectedMax, config.expectedTtlMs) : null;
    const expected = this.expected;
    this.state = {
      policy: config.policy,
      costs: config.costs,
      prefixes: (keys) => this.directory.prefixes(keys, expected ? (key) => expected.holders(key, this.now) : undefined),
      reportedPrefixes: (keys) => this.directory.prefixes(keys),
      ...(expected
        ? {
            recordedHome: (r, at) =>
              expected.longestRecordedPrompt(r.model, r.tenant, r.tokens, r.chunkKeys, at, r.blockKeys ? (c) => r.blockKeys!(c) : undefined)
                ?.nodeId,
          }
        : {}),
      holders: (key) => this.directory.holders(key),
      reservationsOn: (id, now) => this.book.onNode(id, now),
      backlogMs: (id, at) => this.backlog.get(id, at),
      session: (tenant, id) => this.sessions.get(tenant, id),
      reservation: (tenant, id, now) => this.book.forSession(tenant, id, now),
    };
  }

  /** A heartbeat arrived (RecordHeartbeatUseCase): the node's load as it reported it. */
  heartbeat(nodeId: string, model: string, load: TwinNodeLoad, now: number): void {
    const isNew = !this.nodes.has(nodeId);
    // SCHEDULER_MEASURED_COSTS: the node is priced with what it measured of itself unless that is off.
    const costs = this.config.measuredCosts !== false && load.costs ? { costs: load.costs } : {};
    const batch = load.maxBatch ? { maxBatch: load.maxBatch } : {};
    const busy = load.prefillBusyMs !== undefined ? { prefillBusyMs: load.prefillBusyMs } : {};
    this.set({
      nodeId,
      models: [model],
      running: load.running,
      waiting: load.waiting,
      kvUsage: load.kvUsage,
      lastSeenMs: now,
      ...costs,
      ...batch,
      ...busy,
    });
    if (isNew) this.sorted = [...this.nodes.values()].sort((a, b) => (a.nodeId < b.nodeId ? -1 : 1));
  }

  /** A KV event arrived (RecordKvEventUseCase): the directory takes its changes, the sessions its tails. */
  kvEvent(nodeId: string, model: string, changes: readonly HoldingChange[], tails: readonly TwinSessionTail[]): void {
    const dc: DirectoryChange[] = changes.map((c) => ({ kind: c.kind, tier: c.tier, keys: c.keys }));
    this.directory.apply(nodeId, dc);
    // Stored keys are the directory's now; removed or truncated ones are not coming.
    if (this.expected) {
      for (const c of dc) {
        if (c.kind === 'stored') this.expected.confirm(nodeId, c.keys);
        else this.expected.remove(nodeId, c.keys);
      }
    }
    for (const t of tails)
      this.sessions.extend({
        tenant: t.tenant,
        sessionId: t.sessionId,
        nodeId,
        model,
        chunkKeys: t.chunkKeys,
        tokens: t.tokens,
        ...(t.partialKey ? { partialKey: t.partialKey } : {}),
      });
  }

  /** Picks the node for a request (ScheduleInferenceUseCase before the dispatch): pending and backlog counted at once. */
  route(r: TwinRequest, exclude: ReadonlySet<string>, now: number): TwinDispatch | null {
    this.now = now;
    const keys = r.keys;
    const plan = planRoute(this.state, this.sorted, keys ? { ...r, blockKeys: (c: number) => keys.blockKeys(c) } : r, exclude, now);
    if (!plan) return null;
    this.counters.routed++;
    this.counters.reasons[plan.reason] = (this.counters.reasons[plan.reason] ?? 0) + 1;
    this.addPending(plan.nodeId, 1);
    this.backlog.add(plan.nodeId, plan.prefillMs, now);
    const expected = this.expected?.record(plan.nodeId, expectedPrompt(r.model, r.tenant, r.tokens, r.chunkKeys), now);
    return {
      nodeId: plan.nodeId,
      kvSources: plan.kvSources,
      prefillMs: plan.prefillMs,
      ...(plan.reservation ? { reservation: plan.reservation } : {}),
      ...(expected ? { expected } : {}),
    };
  }

  /**
   * The node answered the dispatch: admitted (the session is recorded, the reservation spent) or refused. Returns the node to tell to
   * forget a reservation that moved, unless the request pulls its KV from that node (reservationPrefetchAfter).
   */
  dispatched(r: TwinRequest, d: TwinDispatch, admitted: boolean, now: number): string | undefined {
    if (!admitted) {
      // A dispatch the node did not take is no load of its (ScheduleInferenceUseCase's takeBack).
      this.addPending(d.nodeId, -1);
      this.backlog.take(d.nodeId, d.prefillMs, now);
      if (d.expected) this.expected?.forget(d.expected);
      return undefined;
    }
    if (r.sessionId)
      this.sessions.record({
        tenant: r.tenant,
        sessionId: r.sessionId,
        model: r.model,
        nodeId: d.nodeId,
        chunkKeys: r.chunkKeys,
        promptTokens: r.tokens.length,
        lastUsedMs: now,
      });
    if (!d.reservation) return undefined;
    this.book.release(d.reservation.id);
    const after = reservationPrefetchAfter(d.reservation.nodeId, d.nodeId, d.kvSources);
    if (after === 'hit') {
      this.counters.reservationsHit++;
      return undefined;
    }
    this.counters.reservationsMoved++;
    return after === 'forget' ? d.reservation.nodeId : undefined;
  }

  /** An advisory (AdviseUseCase); null for an unknown session, a refused reservation, or no node. */
  advise(tenant: string, sessionId: string, model: string, expectedArrivalMs: number, now: number): TwinAdvisory | null {
    this.now = now;
    const session = this.sessions.get(tenant, sessionId);
    if (!session || session.model !== model) return null;
    const plan = planAdvisory(
      this.state,
      this.sorted,
      session,
      { tenant, sessionId, model, expectedArrivalMs },
      now,
      this.config.advisoryMaxAheadMs,
    );
    if (!plan) return null;
    const reservation: Reservation = {
      id: `adv-${++this.advisoryIds}`,
      tenant,
      sessionId,
      model,
      nodeId: plan.nodeId,
      expectedAtMs: plan.arrivalMs,
      expiresAtMs: Math.round(plan.arrivalMs + this.config.advisoryTtlMs),
      priority: 0,
    };
    const taken = this.book.reserve(reservation, now);
    if (!taken.ok) return null;
    this.counters.advisories++;
    const forget =
      taken.replaced && taken.replaced.nodeId !== reservation.nodeId
        ? { nodeId: taken.replaced.nodeId, advisoryId: taken.replaced.id }
        : undefined;
    return { reservation, chunkKeys: plan.chunkKeys, sources: plan.sources, ...(forget ? { forget } : {}) };
  }

  /** Counts a request as queued at the node until its next heartbeat reports the real load (NodeRegistry.addPending). */
  private addPending(nodeId: string, delta: number): void {
    const n = this.nodes.get(nodeId);
    if (n) this.set({ ...n, waiting: Math.max(0, n.waiting + delta) });
  }

  private set(n: NodeLoad): void {
    this.nodes.set(n.nodeId, n);
    const i = this.sorted.findIndex((x) => x.nodeId === n.nodeId);
    if (i >= 0) this.sorted[i] = n;
  }
}
