import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import {
  choosePlan,
  ErrorCode,
  MnemoError,
  profiledPattern,
  type PlanChoice,
  type PlanRequest,
  type ProfiledPattern,
} from '@mnemo/kv-core';
import { decodeMessage, encodeMessage, FrontierUpdatedSchema, PlanReplySchema, PlanRequestSchema, Subjects } from '@mnemo/proto';
import type { Clock } from '@mnemo/service-kit';

export interface CachedFrontier {
  readonly jobId: string;
  /** Cheapest first; empty: the pair has no profile (remembered until `missTtlMs` passes or a frontier arrives). */
  readonly frontier: readonly ProfiledPattern[];
}

export interface ReusePlanCacheOptions {
  readonly requestTimeoutMs: number;
  /** How long "this pair has no profile" is believed before asking again. */
  readonly missTtlMs: number;
  /** Told why a background fetch ({@link ReusePlanCache.cachedPlan}) failed. */
  readonly onFetchError?: (e: unknown) => void;
}

/**
 * A node's copy of DroidSpeak frontiers, one per (base, derived). The first plan for a pair
 * asks the profiler (PROFILER_PLAN, whose reply carries the whole frontier); later plans
 * are chosen locally with kv-core's `choosePlan` at the node's current load, with no round
 * trip. A FrontierUpdated notice replaces the pair's entry the moment a job stores a new
 * frontier, so a re-profiled pair never serves a stale plan for long.
 */
export class ReusePlanCache {
  private readonly entries = new Map<string, CachedFrontier & { readonly atMs: number }>();
  private readonly fetching = new Set<string>();
  private sub?: Subscription;

  constructor(
    private readonly nats: NatsConnection,
    private readonly clock: Clock,
    private readonly opts: ReusePlanCacheOptions,
  ) {}

  start(): void {
    if (this.sub) return;
    this.sub = this.nats.subscribe(Subjects.PROFILER_FRONTIER_UPDATED, {
      callback: (err, msg) => {
        if (err) return;
        try {
          const u = decodeMessage(FrontierUpdatedSchema, msg.data);
          this.entries.set(key(u.base, u.derived), {
            jobId: u.jobId,
            frontier: u.frontier.map((p) => profiledPattern(p)),
            atMs: this.clock.monotonicMs(),
          });
        } catch {
          // A malformed notice is dropped; the next plan request fetches the frontier instead.
        }
      },
    });
  }

  stop(): void {
    this.sub?.unsubscribe();
    this.sub = undefined;
  }

  /** The cached frontier of a pair, if any (tests and metrics). */
  peek(base: string, derived: string): CachedFrontier | undefined {
    return this.entries.get(key(base, derived));
  }

  /** The plan for a request of `derived` over context the base cached; null: run a full prefill. */
  async plan(base: string, derived: string, req: PlanRequest): Promise<PlanChoice | null> {
    const entry = await this.frontier(base, derived);
    return entry.frontier.length === 0 ? null : choosePlan(entry.frontier, req);
  }

  /**
   * The plan from the cached frontier, with no round trip (the request path never waits on the
   * profiler): undefined when the pair's frontier is not here yet, which starts fetching it in
   * the background for the requests after this one; null: the pair has no plan within the floor.
   */
  cachedPlan(base: string, derived: string, req: PlanRequest): PlanChoice | null | undefined {
    const k = key(base, derived);
    const hit = this.entries.get(k);
    if (!hit || !this.fresh(hit)) {
      if (!this.fetching.has(k)) {
        this.fetching.add(k);
        this.frontier(base, derived)
          .catch((e: unknown) => this.opts.onFetchError?.(e))
          .finally(() => this.fetching.delete(k));
      }
      return undefined;
    }
    return hit.frontier.length === 0 ? null : choosePlan(hit.frontier, req);
  }

  private fresh(e: CachedFrontier & { readonly atMs: number }): boolean {
    return e.frontier.length > 0 || this.clock.monotonicMs() - e.atMs < this.opts.missTtlMs;
  }

  private async frontier(base: string, derived: string): Promise<CachedFrontier> {
    const k = key(base, derived);
    const hit = this.entries.get(k);
    if (hit && this.fresh(hit)) return hit;
    const msg = await this.nats.request(Subjects.PROFILER_PLAN, encodeMessage(PlanRequestSchema, { base, derived }), {
      timeout: this.opts.requestTimeoutMs,
    });
    const reply = decodeMessage(PlanReplySchema, msg.data);
    let entry: CachedFrontier & { atMs: number };
    if (reply.error) {
      if (reply.error.code !== ErrorCode.NotFound)
        throw new MnemoError(reply.error.code as ErrorCode, `plan for ${base} → ${derived}: ${reply.error.message}`);
      entry = { jobId: '', frontier: [], atMs: this.clock.monotonicMs() };
    } else {
      entry = { jobId: reply.frontierJobId, frontier: reply.frontier.map((p) => profiledPattern(p)), atMs: this.clock.monotonicMs() };
    }
    // A notice that raced ahead of this reply is newer: keep it.
    const now = this.entries.get(k);
    if (!now || now === hit) this.entries.set(k, entry);
    return this.entries.get(k)!;
  }
}

function key(base: string, derived: string): string {
  return `${base}\u0000${derived}`;
}
