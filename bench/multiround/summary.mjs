// Figures of the multi-round benchmark's runs: one run's (or several pooled runs') TTFT, TPOT,
// load balance, KV reuse and routing, where the latency comes from, and the per-pass figures the
// twin validates against.
import { counter, median, percentile, round } from '@mnemo/testkit';

const REASONS = ['least_loaded', 'reservation', 'session_home', 'moved_queue', 'moved_kv', 'longest_prefix', 'cheapest', 'scored'];

/** Several passes of one configuration as one: requests and counters add up, per-node load averages (node ids repeat per pass). */
export function pool(runs) {
  const sum = (x, y) => (typeof x === 'object' ? Object.fromEntries(Object.keys(x).map((k) => [k, sum(x[k], y[k])])) : x + y);
  const loads = new Map();
  for (const r of runs) for (const [id, l] of r.load) loads.set(id, [...(loads.get(id) ?? []), l]);
  return {
    results: runs.flatMap((r) => r.results),
    kv: runs.map((r) => r.kv).reduce(sum),
    adv: runs.map((r) => r.adv).reduce(sum),
    movedBytes: runs.reduce((s, r) => s + r.movedBytes, 0),
    wallS: runs.reduce((s, r) => s + r.wallS, 0),
    load: [...loads].map(([id, ls]) => [id, ls.reduce((x, y) => x + y, 0) / ls.length]),
    schedMetrics: runs.map((r) => r.schedMetrics).join('\n'),
  };
}

/** Each request as a session's first turn, a turn served where the previous one was, or a moved one. */
function moveKinds(results) {
  const last = new Map();
  return results.map((x) => {
    const kind = x.turn === 0 || !last.has(x.session) ? 'first' : last.get(x.session) === x.node ? 'stayed' : 'moved';
    last.set(x.session, x.node);
    return kind;
  });
}

/** Where the latency comes from: TTFT and recomputation by move kind, and the requests at or past p99. */
function byMove(results, ttft) {
  const kinds = moveKinds(results);
  const group = (k) => {
    const xs = results.filter((_, i) => kinds[i] === k);
    if (xs.length === 0) return { requests: 0 };
    const t = xs.map((x) => x.ttftMs);
    return {
      requests: xs.length,
      ttft_p50_ms: round(percentile(t, 50)),
      ttft_p99_ms: round(percentile(t, 99)),
      recomputed_tokens: xs.reduce((s, x) => s + x.promptTokens - x.cachedTokens, 0),
    };
  };
  const p99 = percentile(ttft, 99);
  const tail = results
    .map((x, i) => ({ x, kind: kinds[i] }))
    .filter(({ x }) => x.ttftMs >= p99)
    .sort((a, b) => b.x.ttftMs - a.x.ttftMs);
  return {
    by_move: { first: group('first'), stayed: group('stayed'), moved: group('moved') },
    p99_tail: tail.map(({ x, kind }) => ({
      ttft_ms: round(x.ttftMs),
      kind,
      turn: x.turn,
      prompt_tokens: x.promptTokens,
      recomputed_tokens: x.promptTokens - x.cachedTokens,
    })),
  };
}

/** TTFT by the length of the session's history at the request: where a heavy tail costs whom. */
function byContext(results) {
  const bands = [
    ['under_1k', 0, 1024],
    ['1k_to_4k', 1024, 4096],
    ['over_4k', 4096, Infinity],
  ];
  return Object.fromEntries(
    bands.map(([name, lo, hi]) => {
      const t = results.filter((x) => x.promptTokens >= lo && x.promptTokens < hi).map((x) => x.ttftMs);
      return [name, { requests: t.length, ttft_p50_ms: round(percentile(t, 50)), ttft_p99_ms: round(percentile(t, 99)) }];
    }),
  );
}

/** The per-node load as max over median and max over min (null where the ratio is unbounded). */
function imbalance(load) {
  const loads = load.map(([, l]) => l);
  const med = median(loads);
  return {
    // max/median hides a node left idle (prefix-affinity's failure): say so with max/min.
    max_over_median: med > 0 ? round(Math.max(...loads) / med) : null,
    max_over_min: Math.min(...loads) > 0 ? round(Math.max(...loads) / Math.min(...loads)) : null,
  };
}

/** The figures of one pass of one configuration: what the twin validates against. */
export function passFigures(r) {
  const ttft = r.results.map((x) => x.ttftMs);
  return {
    ...latencyFigures(r),
    imbalance_max_over_median: imbalance(r.load).max_over_median,
    ...(r.onNode ? { time_on_node: onNodeFigures(r.onNode, ttft) } : {}),
    load_average: r.loadAverage,
  };
}

/**
 * Mean ms a request spent queued on its node and from arriving there to its first token, and what
 * the client's mean TTFT adds to the latter: the path outside the nodes (client, NATS, scheduler,
 * dispatch, the first token's way back). Means, so the split is exact over the same requests.
 */
function onNodeFigures(n, ttft) {
  const mean = (sumS, count) => (count > 0 ? round((sumS * 1000) / count, 2) : null);
  const nodeTtft = mean(n.ttftSumS, n.ttftCount);
  const client = ttft.reduce((a, b) => a + b, 0) / ttft.length;
  return {
    queue_mean_ms: mean(n.queueSumS, n.queueCount),
    ttft_mean_ms: nodeTtft,
    outside_nodes_mean_ms: nodeTtft === null ? null : round(client - nodeTtft, 2),
  };
}

/** Count, wall time and the TTFT/TPOT percentiles: the head of both a pass's figures and a summary. */
function latencyFigures(r) {
  const ttft = r.results.map((x) => x.ttftMs);
  const tpot = r.results.map((x) => x.tpotMs);
  return {
    requests: r.results.length,
    wall_s: round(r.wallS, 1),
    ttft_p50_ms: round(percentile(ttft, 50)),
    ttft_p99_ms: round(percentile(ttft, 99)),
    ttft_mean_ms: round(ttft.reduce((a, b) => a + b, 0) / ttft.length),
    tpot_p50_ms: round(percentile(tpot, 50)),
    tpot_p99_ms: round(percentile(tpot, 99)),
  };
}

export function summarize(r) {
  const ttft = r.results.map((x) => x.ttftMs);
  const prompt = r.results.reduce((s, x) => s + x.promptTokens, 0);
  const cached = r.results.reduce((s, x) => s + x.cachedTokens, 0);
  const out = r.results.reduce((s, x) => s + x.tokens.length, 0);
  const { max_over_median, max_over_min } = imbalance(r.load);
  return {
    ...latencyFigures(r),
    throughput_tokens_per_s: round(out / r.wallS, 1),
    mean_active_per_node: Object.fromEntries(r.load.map(([id, l]) => [id, round(l)])),
    imbalance_max_over_median: max_over_median,
    imbalance_max_over_min: max_over_min,
    prompt_tokens: prompt,
    cached_tokens: cached,
    recomputed_tokens: prompt - cached,
    prefix_hit_rate: round(cached / prompt, 3),
    prefix_bytes_moved: r.movedBytes,
    // cached = device prefix cache + restored (from the node's own host/SSD pools, or pulled from a peer).
    restored_tokens: { from_peers: r.kv.peerRestoredTokens, from_local_tiers: r.kv.tierRestoredTokens },
    device_cached_tokens: cached - r.kv.peerRestoredTokens - r.kv.tierRestoredTokens,
    // The part of prefix_bytes_moved advisory prefetches pulled into host pools (chunks not there already).
    prefetched_bytes: r.kv.prefetchedBytes,
    // Prefetched chunks promoted to free device blocks, and what became of them (used by a prefill, purged for blocks, unstaged with their advisory).
    promoted_chunks: r.kv.promoted,
    restore_failures: r.kv.restoreFailures,
    // Which restores failed: from the node's own host/SSD pools, or pulled from a peer (each was recomputed).
    restore_failures_by: r.kv.restoreFailuresBy,
    peer_blocked_s: round(r.kv.peerBlockedS),
    routing: Object.fromEntries(
      REASONS.map((k) => [k, counter(r.schedMetrics, 'mnemo_scheduler_route_reason_total', { reason: k })]).filter(([, v]) => v > 0),
    ),
    by_context: byContext(r.results),
    ...byMove(r.results, ttft),
    advisories: {
      ...r.adv,
      reservations_hit: counter(r.schedMetrics, 'mnemo_scheduler_reservations_used_total', { outcome: 'hit' }),
      reservations_moved: counter(r.schedMetrics, 'mnemo_scheduler_reservations_used_total', { outcome: 'moved' }),
    },
  };
}
