// One twin run of a paper experiment, measured the way the papers measure: requests sent after
// the warm-up only, mean TTFT and TPOT, and each instance's load sampled once a second.
import { mean, median, percentile as pct } from '@mnemo/kv-core';
import { ClosedLoopUsers, TwinCluster } from '@mnemo/twin';

const round = (x, d = 2) => (x === null || !Number.isFinite(x) ? null : Math.round(x * 10 ** d) / 10 ** d);

/**
 * Closed-loop users whose requests are recorded with their send time, so the run keeps only
 * those sent after `warmMs` (the ramp and the first turns, when no KV exists yet, are left out).
 */
export function measuredUsers(usersOptions, warmMs, sink) {
  return (net, sessions) => {
    const wrapped = {
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
 * Runs `config` (a TwinClusterConfig without its client) over `sessions` until `untilMs`; returns
 * the paper's figures over requests sent after `warmMs`, and load per instance: requests held
 * (running and waiting) sampled every second after the warm-up. `byRequest` adds each request's TTFT
 * (`ttft_by_request`), which a results file leaves out (withoutRequests).
 */
export function paperRun(config, sessions, { warmMs, untilMs, byRequest = false }) {
  const sink = [];
  const cluster = new TwinCluster({ ...config, untilMs, client: measuredUsers(config.users, warmMs, sink) }, sessions);
  const samples = cluster.nodes.map(() => []);
  const sample = {
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
  const c = config.costs?.compute;
  const floors = c?.prefillMs
    ? sink.map((r) => {
        const fresh = Math.max(0, r.prompt - r.cached);
        return c.prefillMs(1, fresh, fresh * r.cached + (fresh * (fresh + 1)) / 2);
      })
    : [];
  const perNode = samples.map((s) => mean(s) ?? 0);
  // Fig. 15's metric: users held per instance — the distinct sessions each instance served over the
  // measured window (sticky sessions accumulate on the instance they started on), max ÷ median.
  const usersPerNode = cluster.nodes.map(() => new Set());
  const nodeIndex = new Map(cluster.nodes.map((n, i) => [n.id, i]));
  for (const r of sink) if (nodeIndex.has(r.node)) usersPerNode[nodeIndex.get(r.node)].add(r.session);
  const users = usersPerNode.map((s) => s.size);
  // Instantaneous max / median across instances, over samples where the median instance holds any.
  const inst = samples[0]
    .map((_, k) => samples.map((s) => s[k]))
    .filter((xs) => median(xs) > 0)
    .map((xs) => Math.max(...xs) / median(xs));
  return {
    requests: sink.length,
    failed: cluster.failed,
    ttft_mean_ms: round(mean(ttft)),
    ttft_p50_ms: round(pct(ttft, 50)),
    ttft_p99_ms: round(pct(ttft, 99)),
    // Rounded down, so the rounded P99 never falls under it.
    ttft_floor_ms: floors.length ? Math.floor(pct(floors, 99) * 100) / 100 : null,
    tpot_mean_ms: round(mean(tpot)),
    tpot_p99_ms: round(pct(tpot, 99)),
    prefix_hit_rate: round(prompt ? cached / prompt : null, 3),
    mean_prompt_tokens: round(sink.length ? prompt / sink.length : null, 0),
    load_per_instance: perNode.map((x) => round(x, 1)),
    imbalance_max_over_median: round(median(perNode) > 0 ? Math.max(...perNode) / median(perNode) : null),
    imbalance_instant_mean: round(mean(inst)),
    users_per_instance: users,
    imbalance_users_max_over_median: round(median(users) > 0 ? Math.max(...users) / median(users) : null),
    measured_window_s: round((untilMs - warmMs) / 1000, 0),
    routing: { ...cluster.scheduler.counters.reasons },
    preemptions: cluster.nodes.reduce((a, n) => a + n.counters.preemptions, 0),
    // Segments evicted from full pools, or not written for want of SSD room: all 0 means larger pools would change nothing.
    pool_evictions: cluster.nodes.reduce(
      (a, n) =>
        a + (n.tiers ? n.tiers.counters.evictedSegments.mem + n.tiers.counters.evictedSegments.ssd + n.tiers.counters.ssdSkipped : 0),
      0,
    ),
    node_busy_share: cluster.nodes.map((n) => round(n.counters.busyMs / cluster.events.now, 3)),
    events: cluster.events.fired,
    // With `byRequest`: each measured request's TTFT by its session and turn — the same prompt in every system's run on
    // this seed — for comparisons over the requests two runs both measured (symphony.noise.mjs pairedOverSeeds).
    ...(byRequest ? { ttft_by_request: Object.fromEntries(sink.map((r) => [`${r.session}#${r.turn}`, r.ttftMs])) } : {}),
  };
}

/** The curves as written: each run's per-request TTFTs (`ttft_by_request`) left out. */
export function withoutRequests(curves) {
  return Object.fromEntries(
    Object.entries(curves).map(([name, byUsers]) => [
      name,
      Object.fromEntries(
        Object.entries(byUsers).map(([u, run]) => {
          const written = { ...run };
          delete written.ttft_by_request;
          return [u, written];
        }),
      ),
    ]),
  );
}

export { mean, median, round };
