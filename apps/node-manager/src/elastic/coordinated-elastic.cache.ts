import {
  BLOCK_TOKENS,
  blocksFor,
  ElasticCacheCoordinator,
  SessionDemand,
  type ElasticMember,
  type ElasticModelState,
  type LiveDemand,
} from '@mnemo/kv-core';
import type { Clock } from '@mnemo/service-kit';
import type { Sequence } from '../shared/sequence.js';
import type { SequenceStore } from '../batching/sequence.store.js';
import { demandSession, type ElasticCachePort } from './elastic-cache.port.js';

/** Tallies for metrics, read at scrape time. */
export interface ElasticCacheCounters {
  reclaims: number;
  reclaimsRefused: number;
  loans: number;
}

/** Which finished turns count as a model's demand (kv-core SessionDemand). */
export interface RecentSessionsOptions {
  /** Sessions served this long ago still count; 0: live requests alone. */
  readonly windowMs: number;
  /** Most tokens they count for together (what the model's prefix cache may keep); unbounded when absent. */
  readonly capTokens?: number;
}

/**
 * The node's models on one device budget, driven by the coordinator in 'cache' mode: a worker's
 * lent units become blocks at the end of the master's own cache. Demand is what the model's
 * live requests (running and waiting) need at full length — prompt plus max_tokens — plus the KV
 * of the sessions it served within `recent.windowMs` that are not live now: in multi-turn serving
 * they come back, and their histories are what lent memory should hold (docs/twin.md §7). The
 * scale-down window remembers a burst, so a worker keeps room for it.
 */
export class CoordinatedElasticCache implements ElasticCachePort {
  readonly coordinator: ElasticCacheCoordinator;
  readonly counters: ElasticCacheCounters = { reclaims: 0, reclaimsRefused: 0, loans: 0 };
  private readonly regions: ReadonlyMap<string, number>;
  private readonly reserves: ReadonlyMap<string, number>;
  private readonly sessions: ReadonlyMap<string, SessionDemand>;

  constructor(
    members: readonly ElasticMember[],
    windowMs: number,
    private readonly store: SequenceStore,
    private readonly clock: Clock,
    recent: RecentSessionsOptions,
  ) {
    this.coordinator = new ElasticCacheCoordinator(members, windowMs, 'cache');
    this.regions = new Map(members.map((m) => [m.id, m.blocks.capacity]));
    this.reserves = new Map(members.map((m) => [m.id, m.maxBlocks ?? m.blocks.capacity]));
    this.sessions = new Map(members.map((m) => [m.id, new SessionDemand(recent.windowMs, recent.capTokens)]));
    store.onRemoved((seq) => this.served(seq));
  }

  get models(): readonly string[] {
    return [...this.regions.keys()];
  }

  state(model: string): ElasticModelState {
    return this.coordinator.state(model);
  }

  limit(model: string): number {
    // Whatever fits the whole budget is admitted: it waits for lent units, the window or a reclaim.
    return this.reserves.get(model) ?? 0;
  }

  makeRoom(model: string, blocks: number, session: string): void {
    if (!this.regions.has(model)) return;
    const now = this.clock.monotonicMs();
    const { live, demand } = this.demand(model, now, { session, tokens: blocks * BLOCK_TOKENS });
    this.coordinator.observe(model, now, demand);
    if (this.coordinator.master === model || this.coordinator.master === null) this.lend(now);
    else this.reclaim(model, live);
  }

  /** Periodic step: record every model's demand, retry reclaims a busy master refused, lend idle units. */
  rebalance(): void {
    const now = this.clock.monotonicMs();
    for (const model of this.regions.keys()) {
      const { live, demand } = this.demand(model, now);
      this.coordinator.observe(model, now, demand);
      if (
        this.coordinator.master !== null &&
        this.coordinator.master !== model &&
        live > this.coordinator.ownBlocks(model).capacity * BLOCK_TOKENS
      )
        this.reclaim(model, live);
    }
    this.lend(now);
  }

  private lend(now: number): void {
    if (this.coordinator.tick(now) > 0) this.counters.loans++;
  }

  private reclaim(model: string, tokens: number): void {
    const r = this.coordinator.reclaimFor(model, tokens);
    if (!r.ok) this.counters.reclaimsRefused++;
    else if (r.workerBlocks > 0) this.counters.reclaims++;
  }

  /**
   * Tokens the model's live requests (and `admitted`) need at their full length, and with them its
   * demand: those plus the recent sessions'. A worker reclaims for the live ones only — a recent
   * session's KV is cache, which does not justify evicting the master's running requests — while
   * its scale-down window and the master's loan count both.
   */
  private demand(model: string, now: number, admitted?: LiveDemand): { live: number; demand: number } {
    const requests: LiveDemand[] = admitted ? [admitted] : [];
    for (const s of this.store.all())
      if (s.model.id === model)
        requests.push({ session: demandSession(s.request), tokens: blocksFor(s.request.tokens.length + s.maxTokens - 1) * BLOCK_TOKENS });
    const live = requests.reduce((a, r) => a + r.tokens, 0);
    return { live, demand: this.sessions.get(model)!.demand(now, requests) };
  }

  /** A request left the store: its session holds the KV of every token it computed (none if it never ran). */
  private served(seq: Sequence): void {
    const sessions = this.sessions.get(seq.model.id);
    if (!sessions || seq.firstTokenMs === undefined) return;
    sessions.served(
      demandSession(seq.request),
      this.clock.monotonicMs(),
      blocksFor(seq.request.tokens.length + seq.generated - 1) * BLOCK_TOKENS,
    );
  }
}
