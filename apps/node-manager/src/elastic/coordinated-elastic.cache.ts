import { BLOCK_TOKENS, blocksFor, ElasticCacheCoordinator, type ElasticMember, type ElasticModelState } from '@mnemo/kv-core';
import type { Clock } from '@mnemo/service-kit';
import type { SequenceStore } from '../batching/sequence.store.js';
import type { ElasticCachePort } from './elastic-cache.port.js';

/** Tallies for metrics, read at scrape time. */
export interface ElasticCacheCounters {
  reclaims: number;
  reclaimsRefused: number;
  loans: number;
}

/**
 * The node's models on one device budget, driven by the coordinator in 'cache' mode: a worker's
 * lent units become blocks at the end of the master's own cache. Demand is what the model's
 * live requests (running and waiting) need at full length — prompt plus max_tokens — so the
 * scale-down window remembers a burst and a worker keeps room for it.
 */
export class CoordinatedElasticCache implements ElasticCachePort {
  readonly coordinator: ElasticCacheCoordinator;
  readonly counters: ElasticCacheCounters = { reclaims: 0, reclaimsRefused: 0, loans: 0 };
  private readonly regions: ReadonlyMap<string, number>;
  private readonly reserves: ReadonlyMap<string, number>;

  constructor(
    members: readonly ElasticMember[],
    windowMs: number,
    private readonly store: SequenceStore,
    private readonly clock: Clock,
  ) {
    this.coordinator = new ElasticCacheCoordinator(members, windowMs, 'cache');
    this.regions = new Map(members.map((m) => [m.id, m.blocks.capacity]));
    this.reserves = new Map(members.map((m) => [m.id, m.maxBlocks ?? m.blocks.capacity]));
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

  makeRoom(model: string, blocks: number): void {
    if (!this.regions.has(model)) return;
    const now = this.clock.monotonicMs();
    const tokens = (this.liveBlocks(model) + blocks) * BLOCK_TOKENS;
    this.coordinator.observe(model, now, tokens);
    if (this.coordinator.master === model || this.coordinator.master === null) this.lend(now);
    else this.reclaim(model, tokens);
  }

  /** Periodic step: record every model's demand, retry reclaims a busy master refused, lend idle units. */
  rebalance(): void {
    const now = this.clock.monotonicMs();
    for (const model of this.regions.keys()) {
      const tokens = this.liveBlocks(model) * BLOCK_TOKENS;
      this.coordinator.observe(model, now, tokens);
      if (this.coordinator.master !== null && this.coordinator.master !== model && tokens > this.coordinator.ownBlocks(model).capacity * BLOCK_TOKENS) this.reclaim(model, tokens);
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

  /** Blocks the model's live requests need at their full length. */
  private liveBlocks(model: string): number {
    let n = 0;
    for (const s of this.store.all()) if (s.model.id === model) n += blocksFor(s.request.tokens.length + s.maxTokens - 1);
    return n;
  }
}
