import type { Counter, Gauge } from 'prom-client';
import { judgeReservationEnd, type AdvisoryVerdict, type ExpectedHoldingsStats, type KvDirectoryStats } from '@mnemo/kv-core';
import { ADVISORY_OUTCOMES_HELP, metricBuilders, type ServiceMetrics } from '@mnemo/service-kit';

/** Scheduler-specific metrics, registered on the service's registry. */
export class SchedulerMetrics {
  readonly liveNodes: Gauge;
  readonly dispatches: Counter<'outcome'>;
  readonly nodesDropped: Counter<'reason'>;
  readonly kvEvents: Counter<'kind'>;
  readonly sessionTails: Counter<'outcome'>;
  readonly routeReasons: Counter<'policy' | 'reason'>;
  readonly advisories: Counter<'outcome'>;
  readonly prefetches: Counter<'outcome'>;
  readonly nodeForgets: Counter<'outcome'>;
  readonly invalidations: Counter<'outcome'>;
  readonly reservationsUsed: Counter<'outcome'>;
  readonly liveReservations: Gauge;
  readonly sessions: Gauge;
  readonly kvReportsRequested: Counter<'reason'>;
  readonly directoryKeys: Gauge;
  readonly directoryHoldings: Gauge;
  readonly directoryEvictions: Counter;
  readonly expectedHoldings: Gauge;
  readonly expectedOutcomes: Counter<'outcome'>;
  readonly expectedLookups: Counter<'outcome'>;
  readonly advisoryOutcomes: Counter<'outcome' | 'reason'>;

  private liveNodesSource: () => number = () => 0;
  private expiriesSource: () => number = () => 0;
  private readonly judged = new Map<string, { verdict: AdvisoryVerdict; count: number }>();
  private reservationsSource: () => number = () => 0;
  private sessionsSource: () => number = () => 0;
  private directorySource: () => KvDirectoryStats = () => ({ keys: 0, holdings: 0, evictions: 0 });
  private expectedSource: () => ExpectedHoldingsStats = () => ({ holdings: 0, confirmed: 0, removed: 0, expired: 0, evicted: 0 });

  constructor(metrics: ServiceMetrics) {
    // Gauges are sampled at scrape time so they can never drift from what they read.
    const { counter, sampled, tally, tallyBy } = metricBuilders(metrics.registry);
    this.liveNodes = sampled('mnemo_scheduler_live_nodes', 'Nodes with a recent heartbeat', () => this.liveNodesSource());
    this.dispatches = counter(
      'mnemo_scheduler_dispatches_total',
      'Dispatches of an inference to a node, by outcome (admitted, refused, unreachable)',
      ['outcome'],
    );
    this.nodesDropped = counter(
      'mnemo_scheduler_nodes_dropped_total',
      'Nodes removed from the registry, by reason (timeout, left, unreachable)',
      ['reason'],
    );
    this.routeReasons = counter(
      'mnemo_scheduler_route_reason_total',
      'Nodes picked for a dispatch, by policy and reason: reservation / session_home (stayed), moved_queue / moved_kv (left the ' +
        "session's node for its queue or for KV held elsewhere), cheapest (no home), least_loaded, longest_prefix, scored",
      ['policy', 'reason'],
    );
    this.advisories = counter(
      'mnemo_scheduler_advisories_total',
      'Advisories, by outcome (reserved, or the error code: not_found, overloaded, invalid_request, …)',
      ['outcome'],
    );
    this.prefetches = counter(
      'mnemo_scheduler_prefetch_requests_total',
      'PrefetchRequests sent to reserved nodes, by outcome (queued, unavailable, timeout, refused)',
      ['outcome'],
    );
    this.nodeForgets = counter(
      'mnemo_scheduler_forget_requests_total',
      'ForgetRequests sent to nodes (invalidations, replaced advisories, deleted sessions), by outcome; kept_as_source: ' +
        'none sent, the moved request pulls from what that node prefetched',
      ['outcome'],
    );
    this.invalidations = counter(
      'mnemo_scheduler_invalidations_total',
      'Advisory invalidations, by what the id was (live, expired, unknown)',
      ['outcome'],
    );
    this.reservationsUsed = counter(
      'mnemo_scheduler_reservations_used_total',
      'Reservations met by their request: hit (ran on the reserved node) or moved (the reserved node could not take it)',
      ['outcome'],
    );
    this.liveReservations = sampled('mnemo_scheduler_reservations', 'Live advisory reservations', () => this.reservationsSource());
    this.sessions = sampled('mnemo_scheduler_sessions', 'Sessions remembered (bounded by SCHEDULER_MAX_SESSIONS)', () =>
      this.sessionsSource(),
    );
    this.kvEvents = counter('mnemo_scheduler_kv_events_total', 'KV events received from nodes, by kind (diff, report)', ['kind']);
    this.sessionTails = counter(
      'mnemo_scheduler_session_tails_total',
      "Nodes' reports of the KV a session's request left, by outcome (applied; stale: the session moved on or is unknown; invalid)",
      ['outcome'],
    );
    this.kvReportsRequested = counter(
      'mnemo_scheduler_kv_reports_requested_total',
      'Full KV reports asked of a node, by reason (joined, unknown, gap)',
      ['reason'],
    );
    this.directoryKeys = sampled('mnemo_scheduler_kv_directory_keys', 'Chunk keys in the KV directory', () => this.directorySource().keys);
    this.directoryHoldings = sampled(
      'mnemo_scheduler_kv_directory_holdings',
      '(chunk key, node) pairs in the KV directory: what SCHEDULER_KV_DIRECTORY_MAX_HOLDINGS bounds',
      () => this.directorySource().holdings,
    );
    this.directoryEvictions = tally(
      'mnemo_scheduler_kv_directory_evictions_total',
      'Chunk keys the KV directory forgot to stay within its bound',
      () => this.directorySource().evictions,
    );
    this.expectedHoldings = sampled(
      'mnemo_scheduler_kv_directory_expected_holdings',
      '(key, node) pairs routed and not yet reported by the node (SCHEDULER_EXPECTED_HOLDINGS_MAX bounds them)',
      () => this.expectedSource().holdings,
    );
    this.expectedOutcomes = tallyBy(
      'mnemo_scheduler_kv_directory_expected_outcomes_total',
      'How expected holdings ended: confirmed (a KV event stored the chunk), removed ' +
        '(evicted on the node, or its dispatch failed), expired (TTL), evicted (bound)',
      ['outcome'],
      () => {
        const s = this.expectedSource();
        return (['confirmed', 'removed', 'expired', 'evicted'] as const).map((outcome) => [{ outcome }, s[outcome]] as const);
      },
    );
    this.expectedLookups = counter(
      'mnemo_scheduler_kv_directory_expected_lookups_total',
      "Routings that consulted the expected holdings: hit (the request's chunks " +
        'or a prompt it extends were expected on a node), miss (nothing expected)',
      ['outcome'],
    );
    this.advisoryOutcomes = tallyBy('mnemo_advisory_outcomes_total', ADVISORY_OUTCOMES_HELP, ['outcome', 'reason'], () => {
      const rows = [...this.judged.values()].map(
        ({ verdict, count }) => [{ outcome: verdict.outcome, reason: verdict.reason }, count] as const,
      );
      const expired = this.expiriesSource();
      const v = judgeReservationEnd('expired')!;
      return expired > 0 ? [...rows, [{ outcome: v.outcome, reason: v.reason }, expired] as const] : rows;
    });
  }

  /** Counts the scheduler's verdict on an advisory (null: withdrawn, not judged). */
  judgedAdvisory(v: AdvisoryVerdict | null): void {
    if (!v) return;
    const k = `${v.outcome}/${v.reason}`;
    const e = this.judged.get(k) ?? { verdict: v, count: 0 };
    e.count++;
    this.judged.set(k, e);
  }

  /** Where the advisory outcome counter reads how many reservations expired unreleased (spurious advisories). */
  observeAdvisoryExpiries(source: () => number): void {
    this.expiriesSource = source;
  }

  /** Where the expected-holdings gauge and outcome counter read their values. */
  observeExpected(source: () => ExpectedHoldingsStats): void {
    this.expectedSource = source;
  }

  /** Where the reservation and session gauges read their values. */
  observeSessions(reservations: () => number, sessions: () => number): void {
    this.reservationsSource = reservations;
    this.sessionsSource = sessions;
  }

  /** Where the directory's gauges read their values. */
  observeDirectory(source: () => KvDirectoryStats): void {
    this.directorySource = source;
  }

  /** Where the live-node gauge reads its value. */
  observeLiveNodes(source: () => number): void {
    this.liveNodesSource = source;
  }
}
