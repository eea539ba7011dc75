// One twin run of a paper experiment, measured the way the papers measure: requests sent after
// the warm-up only, mean TTFT and TPOT, and each instance's load sampled once a second.
import { mean, median, percentile } from '@mnemo/kv-core';
import { ClosedLoopUsers, type UserNet, type UsersOptions } from '../../client/closed-loop.users.js';
import type { TwinEvent } from '../../core/event.queue.js';
import { TwinCluster, type TwinClusterConfig } from '../../scenario/twin.cluster.js';
import type { TwinSession } from '../../workload/session.workload.js';

/** `x` to `d` decimals; null for a figure that is missing or not finite (a results file writes null, never NaN). */
export const roundFigure = (x: number | null, d = 2): number | null =>
  x === null || !Number.isFinite(x) ? null : Math.round(x * 10 ** d) / 10 ** d;

/** One measured request: when it was sent, its prompt, and what came back. */
export interface MeasuredRequest {
  readonly sentAt: number;
  readonly prompt: number;
  readonly ttftMs: number;
  readonly tpotMs: number | null;
  readonly cached: number;
  readonly node: string;
  readonly session: string;
  readonly turn: number;
}

/** What one paper run reports (`ttft_by_request` only when asked for). */
export interface PaperRunSummary {
  readonly requests: number;
  readonly failed: number;
  readonly ttft_mean_ms: number | null;
  readonly ttft_p50_ms: number | null;
  readonly ttft_p99_ms: number | null;
  /** A lower bound on the run's P99 TTFT: the P99 of each measured request's uncached prefill alone on an idle GPU. */
  readonly ttft_floor_ms: number | null;
  readonly tpot_mean_ms: number | null;
  readonly tpot_p99_ms: number | null;
  readonly prefix_hit_rate: number | null;
  readonly mean_prompt_tokens: number | null;
  readonly load_per_instance: readonly (number | null)[];
  readonly imbalance_max_over_median: number | null;
  readonly imbalance_instant_mean: number | null;
  readonly users_per_instance: readonly number[];
  readonly imbalance_users_max_over_median: number | null;
  readonly measured_window_s: number | null;
  readonly routing: Readonly<Record<string, number>>;
  readonly preemptions: number;
  readonly pool_evictions: number;
  readonly node_busy_share: readonly (number | null)[];
  readonly events: number;
  readonly ttft_by_request?: Readonly<Record<string, number>>;
}

/** Runs by name, then by user count (a JSON file's keys: the counts are strings once written). */
export type Curves<R> = Record<string, Record<number, R>>;

/**
 * Closed-loop users whose requests are recorded with their send time, so the run keeps only
 * those sent after `warmMs` (the ramp and the first turns, when no KV exists yet, are left out).
 */
export function measuredUsers(usersOptions: UsersOptions, warmMs: number, sink: MeasuredRequest[]) {
  return (net: UserNet, sessions: readonly TwinSession[]): ClosedLoopUsers => {
    const wrapped: UserNet = {
      get now() {
        return net.now;
      },
      at: (t, fn) => net.at(t, fn),
      infer: (sessionId, turn, prompt, maxTokens, done, priority) => {
        const sentAt = net.now;
        net.infer(
          sessionId,
          turn,
          prompt,
          maxTokens,
          (r) => {
            if (sentAt >= warmMs)
              sink.push({
                sentAt,
                prompt: prompt.length,
                ttftMs: r.ttftMs,
                tpotMs: r.reply.length > 1 ? (r.totalMs - r.ttftMs) / (r.reply.length - 1) : null,
                cached: r.cachedTokens,
                node: r.node,
                session: sessionId,
                turn,
              });
            done(r);
          },
          priority,
        );
      },
      advise: (sessionId, typeMs) => net.advise(sessionId, typeMs),
      endSession: (sessionId) => net.endSession?.(sessionId),
    };
    return new ClosedLoopUsers(sessions, usersOptions, wrapped);
  };
}

/**
 * Runs `config` (its client is replaced) over `sessions` until `untilMs`; returns the paper's
 * figures over requests sent after `warmMs`, and load per instance: requests held (running and
 * waiting) sampled every second after the warm-up. `byRequest` adds each request's TTFT
 * (`ttft_by_request`), which a results file leaves out ({@link withoutRequests}).
 */
export function paperRun(
  config: TwinClusterConfig,
  sessions: readonly TwinSession[],
  { warmMs, untilMs, byRequest = false }: { readonly warmMs: number; readonly untilMs: number; readonly byRequest?: boolean },
): PaperRunSummary {
  const sink: MeasuredRequest[] = [];
  const cluster = new TwinCluster({ ...config, untilMs, client: measuredUsers(config.users, warmMs, sink) }, sessions);
  const samples: number[][] = cluster.nodes.map(() => []);
  const sample: TwinEvent = {
    fire: (now) => {
      if (now >= warmMs) cluster.nodes.forEach((n, i) => samples[i].push(n.held));
      cluster.events.at(now + 1000, sample);
    },
  };
  cluster.events.at(0, sample);
  cluster.run();
  const ttft = sink.map((r) => r.ttftMs);
  const tpot = sink.flatMap((r) => (r.tpotMs === null ? [] : [r.tpotMs]));
  const prompt = sink.reduce((a, r) => a + r.prompt, 0);
  const cached = sink.reduce((a, r) => a + r.cached, 0);
  // A true lower bound on this run's P99 TTFT: each measured request's TTFT is at least the prefill of
  // the tokens it did not find cached, alone on an idle GPU (a batched or chunked prefill costs no less),
  // so the quantile over the same requests is at least the quantile of those prefills.
  const c = config.costs.compute;
  const floors = sink.map((r) => {
    const fresh = Math.max(0, r.prompt - r.cached);
    return c.prefillMs(1, fresh, fresh * r.cached + (fresh * (fresh + 1)) / 2);
  });
  const perNode = samples.map((s) => mean(s) ?? 0);
  // Fig. 15's metric: users held per instance — the distinct sessions each instance served over the
  // measured window (sticky sessions accumulate on the instance they started on), max ÷ median.
  const usersPerNode = cluster.nodes.map(() => new Set<string>());
  const nodeIndex = new Map(cluster.nodes.map((n, i) => [n.id, i]));
  for (const r of sink) {
    const i = nodeIndex.get(r.node);
    if (i !== undefined) usersPerNode[i].add(r.session);
  }
  const users = usersPerNode.map((s) => s.size);
  const medianOf = (xs: readonly number[]): number => median(xs) ?? 0;
  // Instantaneous max / median across instances, over samples where the median instance holds any.
  const inst = samples[0]
    .map((_, k) => samples.map((s) => s[k]))
    .filter((xs) => medianOf(xs) > 0)
    .map((xs) => Math.max(...xs) / medianOf(xs));
  const p99Floor = percentile(floors, 99);
  return {
    requests: sink.length,
    failed: cluster.failed,
    ttft_mean_ms: roundFigure(mean(ttft)),
    ttft_p50_ms: roundFigure(percentile(ttft, 50)),
    ttft_p99_ms: roundFigure(percentile(ttft, 99)),
    // Rounded down, so the rounded P99 never falls under it.
    ttft_floor_ms: p99Floor === null ? null : Math.floor(p99Floor * 100) / 100,
    tpot_mean_ms: roundFigure(mean(tpot)),
    tpot_p99_ms: roundFigure(percentile(tpot, 99)),
    prefix_hit_rate: roundFigure(prompt ? cached / prompt : null, 3),
    mean_prompt_tokens: roundFigure(sink.length ? prompt / sink.length : null, 0),
    load_per_instance: perNode.map((x) => roundFigure(x, 1)),
    imbalance_max_over_median: roundFigure(medianOf(perNode) > 0 ? Math.max(...perNode) / medianOf(perNode) : null),
    imbalance_instant_mean: roundFigure(mean(inst)),
    users_per_instance: users,
    imbalance_users_max_over_median: roundFigure(medianOf(users) > 0 ? Math.max(...users) / medianOf(users) : null),
    measured_window_s: roundFigure((untilMs - warmMs) / 1000, 0),
    routing: { ...cluster.scheduler.counters.reasons },
    preemptions: cluster.nodes.reduce((a, n) => a + n.counters.preemptions, 0),
    // Segments evicted from full pools, or not written for want of SSD room: all 0 means larger pools would change nothing.
    pool_evictions: cluster.nodes.reduce(
      (a, n) =>
        a + (n.tiers ? n.tiers.counters.evictedSegments.mem + n.tiers.counters.evictedSegments.ssd + n.tiers.counters.ssdSkipped : 0),
      0,
    ),
    node_busy_share: cluster.nodes.map((n) => roundFigure(n.counters.busyMs / cluster.events.now, 3)),
    events: cluster.events.fired,
    // With `byRequest`: each measured request's TTFT by its session and turn — the same prompt in every system's run on
    // this seed — for comparisons over the requests two runs both measured (symphony.noise.ts pairedOverSeeds).
    ...(byRequest ? { ttft_by_request: Object.fromEntries(sink.map((r) => [`${r.session}#${r.turn}`, r.ttftMs])) } : {}),
  };
}

/** The curves as written: each run's per-request TTFTs (`ttft_by_request`) left out. */
export function withoutRequests<R extends { readonly ttft_by_request?: unknown }>(curves: Curves<R>): Curves<Omit<R, 'ttft_by_request'>> {
  return Object.fromEntries(
    Object.entries(curves).map(([name, byUsers]) => [
      name,
      Object.fromEntries(
        Object.entries(byUsers).map(([u, run]) => {
          const { ttft_by_request: _, ...written } = run;
          return [u, written];
        }),
      ),
    ]),
  );
}
