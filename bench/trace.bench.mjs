// A slice of a request trace (Mooncake's format, docs/traces.md) replayed open-loop through a real
// cluster — NATS, the scheduler, sim node-managers as separate processes, the multi-round
// benchmark's cluster and cost model (bench/multiround/cluster.mjs) — once per scheduler policy,
// and the twin's prefill pool on the same slice beside each pass. Each request's tokens are its
// blocks' seeded tokens (the trace loader's), so equal block ids give equal prefixes the nodes can
// reuse; it arrives at its trace time × --time-scale. Per policy: live mean and p99 TTFT and the
// share of prompt tokens served from cache (the nodes' own tiers or pulled from a peer), and the
// twin's figures for the same slice; then whether the hit rates agree within 0.05 and the live and
// twin orders by mean TTFT where the live passes separate the policies; and symphony against conductor
// per pass at mean and p99 TTFT (routing_check, the multi-round benchmark's never-behind rule).
// Writes bench/results/trace.json.
// Every policy runs --passes times (default 3), each pass in a rotated order; a policy's figures pool its passes.
// Run: npm run bench -- trace [--trace FILE] [--from N] [--limit N] [--length-scale T] [--time-scale X] [--max-output N] [--passes N]
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { CHUNK_TOKENS, percentile, SERVING_SYSTEMS } from '@mnemo/kv-core';
import { loadTrace, runPrefillPool, traceStats, traceText } from '@mnemo/twin';
import { arg, counter, freePort, metricValue, ratio, round, routingCheck, startNats, waitForQuiet } from '@mnemo/testkit';
import { launch, ready, stop } from './lib/services.mjs';
import { CLUSTER, DILATION, explainTail, GPU, infer, kvEnv, KV_BYTES_PER_TOKEN, simNodeEnv } from './multiround/cluster.mjs';
import { root } from './lib/bench.args.mjs';

const FILE = arg('trace', join(root, 'bench/traces/mooncake-conversation_trace.jsonl.gz'));
const FROM = Number(arg('from', 0));
const LIMIT = Number(arg('limit', 200));
const TOKENS_PER_BLOCK = Number(arg('length-scale', 256));
const TIME_SCALE = Number(arg('time-scale', 0.5));
const MAX_OUTPUT = Number(arg('max-output', 16));
const PASSES = Number(arg('passes', 3));
const THRESHOLD = 2;
/** The scheduler's policies, each with the twin policy it is (local cache-aware = conductor that may not fetch). */
const ALL_POLICIES = [
  { name: 'least-loaded', env: { SCHEDULER_POLICY: 'recompute', SCHEDULER_PEER_FETCH: 'off' }, twin: 'least-loaded' },
  { name: 'local', env: { SCHEDULER_POLICY: 'conductor', SCHEDULER_PEER_FETCH: 'off' }, twin: 'local' },
  { name: 'conductor', env: { SCHEDULER_POLICY: 'conductor', SCHEDULER_PEER_FETCH: 'on' }, twin: 'conductor' },
  { name: 'llmd', env: { SCHEDULER_POLICY: 'llmd', SCHEDULER_PEER_FETCH: 'off' }, twin: 'llmd' },
  { name: 'symphony', env: { SCHEDULER_POLICY: 'symphony', SCHEDULER_PEER_FETCH: 'on' }, twin: 'symphony' },
];
// Labelled probes, never in the default run: symphony pricing every node with the configured figures.
const PROBES = [
  {
    name: 'symphony-configured-costs',
    env: { SCHEDULER_POLICY: 'symphony', SCHEDULER_PEER_FETCH: 'on', SCHEDULER_MEASURED_COSTS: 'off' },
    twin: 'symphony',
  },
];
// A probe may run some of them (--policies a,b); the committed run is the five above.
const POLICIES = arg('policies', ALL_POLICIES.map((p) => p.name).join(','))
  .split(',')
  .map((name) => [...ALL_POLICIES, ...PROBES].find((p) => p.name === name) ?? fail(`unknown policy ${name}`));
function fail(why) {
  throw new Error(why);
}
// Every policy's nodes get the same device KV, host pool and SSD pool.
const TIERS = SERVING_SYSTEMS.symphony;
const MiB = 1024 ** 2;
const PREFILL_MS_PER_TOKEN = (GPU.prefillTokenUs * DILATION) / 1000;
const HOST_CHUNK_MS = (GPU.restoreChunkUs * DILATION) / 1000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const loaded = loadTrace(traceText(readFileSync(FILE)), {
  from: FROM,
  limit: LIMIT,
  tokensPerBlock: TOKENS_PER_BLOCK,
  model: CLUSTER.model,
  vocab: 256,
});
// A request the sim nodes cannot hold (prompt and output past their context) is left out of both runs.
const slice = loaded.requests.filter((r) => r.inputTokens + MAX_OUTPUT < CLUSTER.maxContext);
const stats = traceStats({ ...loaded, requests: slice });
console.log(
  `slice: ${slice.length} of ${loaded.requests.length} requests, ${stats.duration_s * TIME_SCALE} s, max hit rate ${stats.max_hit_rate}`,
);

/** Requests, failures, mean and p99 TTFT and hit rate of replayed requests (one pass or several pooled). */
function summarize(done) {
  const ok = done.filter((d) => d.ok);
  const ttft = ok.map((d) => d.ttftMs);
  return {
    requests: done.length,
    failed: done.length - ok.length,
    ttft_p50_ms: ok.length ? round(percentile(ttft, 50), 1) : null,
    ttft_mean_ms: ok.length ? round(ttft.reduce((a, b) => a + b, 0) / ttft.length, 1) : null,
    ttft_p99_ms: ok.length ? round(percentile(ttft, 99), 1) : null,
    hit_rate: ok.length ? round(ok.reduce((a, d) => a + d.cachedTokens, 0) / ok.reduce((a, d) => a + d.promptTokens, 0), 4) : null,
    ...(done.length > ok.length ? { first_error: done.find((d) => !d.ok).error } : {}),
  };
}

async function livePass(p, natsUrl) {
  const dataDir = mkdtempSync(join(tmpdir(), `mnemo-trace-${p.name}-`));
  const common = { NATS_URL: natsUrl, LOG_LEVEL: 'error', METRICS_HOST: '127.0.0.1' };
  const schedPort = await freePort();
  const scheduler = launch('scheduler', {
    ...common,
    ...p.env,
    METRICS_PORT: String(schedPort),
    SCHEDULER_PREFILL_US_PER_TOKEN: String(GPU.prefillTokenUs * DILATION),
    SCHEDULER_HOST_LOAD_US_PER_CHUNK: String(GPU.restoreChunkUs * DILATION),
    SCHEDULER_CONDUCTOR_THRESHOLD_PCT: String(THRESHOLD * 100),
    SCHEDULER_NODE_TIMEOUT_MS: '5000',
  });
  const nodes = [];
  for (let i = 0; i < CLUSTER.nodes; i++) {
    const port = await freePort();
    const nodeId = `tr-${p.name}-${i}`;
    nodes.push({
      nodeId,
      port,
      child: launch('node-manager', {
        ...common,
        METRICS_PORT: String(port),
        NODE_ID: nodeId,
        ...kvEnv(dataDir, nodeId, TIERS),
        ...simNodeEnv(),
      }),
    });
  }
  const nc = await connect({ servers: natsUrl });
  try {
    await Promise.all([ready(schedPort), ...nodes.map((n) => ready(n.port))]);
    await sleep(1000);
    // Each pass starts on a quiet machine (the previous pass's teardown and this cluster's boot settled).
    const quiet = await waitForQuiet();
    const t0 = performance.now();
    const done = await Promise.all(
      slice.map(async (r, i) => {
        await sleep(Math.max(0, r.arrivalMs * TIME_SCALE - (performance.now() - t0)));
        const tokens = loaded.blocks.promptTokens(r.blockIds, r.lastBlockTokens);
        try {
          const out = await infer(
            nc,
            `tr-${p.name}-${i}`,
            'trace',
            `r${r.line}`,
            tokens,
            Math.max(1, Math.min(MAX_OUTPUT, r.outputTokens)),
          );
          return {
            ok: true,
            ttftMs: out.ttftMs,
            requestId: out.requestId,
            promptTokens: tokens.length,
            cachedTokens: out.cachedTokens,
            node: out.node,
          };
        } catch (e) {
          return { ok: false, error: String(e.message ?? e), promptTokens: tokens.length };
        }
      }),
    );
    const wallS = (performance.now() - t0) / 1000;
    // Where the nodes' time went: their own TTFT and queue (from arrival there), and the KV pulled from peers.
    const node = {
      ttft_s: 0,
      ttft_n: 0,
      queue_s: 0,
      queue_n: 0,
      peer_restored_tokens: 0,
      peer_bytes: 0,
      peer_blocked_s: 0,
      restore_failures: 0,
    };
    const measuredCosts = {};
    for (const n of nodes) {
      const text = await (await fetch(`http://127.0.0.1:${n.port}/metrics`)).text();
      // What the node measured of itself, which symphony priced it with (ms per chunk).
      measuredCosts[n.nodeId] = Object.fromEntries(
        ['recompute', 'host', 'ssd', 'peer'].map((term) => [term, metricValue(text, 'mnemo_node_measured_cost_ms', { term }) ?? null]),
      );
      node.ttft_s += counter(text, 'mnemo_time_to_first_token_seconds_sum');
      node.ttft_n += counter(text, 'mnemo_time_to_first_token_seconds_count');
      node.queue_s += counter(text, 'mnemo_node_queue_seconds_sum');
      node.queue_n += counter(text, 'mnemo_node_queue_seconds_count');
      node.peer_restored_tokens += counter(text, 'mnemo_kv_peer_restored_tokens_total');
      node.peer_bytes += counter(text, 'mnemo_kv_peer_fetch_bytes_total');
      node.peer_blocked_s += counter(text, 'mnemo_kv_peer_blocked_seconds_total');
      node.restore_failures += counter(text, 'mnemo_kv_peer_restore_failures_total') + counter(text, 'mnemo_kv_restore_failures_total');
    }
    // Where each policy put the prompt tokens, and why its slowest requests were slow (the scheduler's `why`).
    const ok = done.filter((d) => d.ok);
    const promptTokensByNode = Object.fromEntries(
      nodes.map((n) => [n.nodeId, ok.filter((d) => d.node === n.nodeId).reduce((a, d) => a + d.promptTokens - d.cachedTokens, 0)]),
    );
    const tail = await explainTail(nc, 'trace', ok);
    return {
      done,
      ...summarize(done),
      wall_s: round(wallS, 1),
      quiet,
      uncached_tokens_by_node: promptTokensByNode,
      measured_ms_per_chunk: measuredCosts,
      tail,
      on_nodes: {
        ttft_mean_ms: node.ttft_n ? round((node.ttft_s / node.ttft_n) * 1000, 1) : null,
        queue_mean_ms: node.queue_n ? round((node.queue_s / node.queue_n) * 1000, 1) : null,
        peer_restored_tokens: node.peer_restored_tokens,
        peer_bytes: node.peer_bytes,
        peer_blocked_s: round(node.peer_blocked_s, 2),
        restore_failures: node.restore_failures,
      },
    };
  } finally {
    await nc.close();
    await Promise.all([...nodes.map((n) => stop(n.child)), stop(scheduler)]);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The twin's prefill pool on the same slice with the live nodes' sizes and cost model. */
function twinPass(p) {
  const poolTokens = (bytes) => Math.floor(bytes / KV_BYTES_PER_TOKEN);
  return runPrefillPool(slice, {
    nodes: CLUSTER.nodes,
    hostTokens: CLUSTER.kvBlocks * 16 + poolTokens(parseInt(CLUSTER.hostPool, 10) * MiB),
    ssdTokens: poolTokens(parseInt(CLUSTER.ssdPool, 10) * MiB),
    policy: p.twin,
    threshold: THRESHOLD,
    timeScale: TIME_SCALE,
    costs: {
      prefillMs: (t) => (t > 0 ? 1 + t * PREFILL_MS_PER_TOKEN : 0),
      hostChunkMs: HOST_CHUNK_MS,
      ssdChunkMs: HOST_CHUNK_MS,
      // The scheduler's default price of a peer pull (kv-core DEFAULT_ROUTING_COSTS), dilated like the rest.
      peerChunkMs: 2.7 * DILATION + HOST_CHUNK_MS,
      chunkBytes: CHUNK_TOKENS * KV_BYTES_PER_TOKEN,
    },
    recomputeMsPerChunk: CHUNK_TOKENS * PREFILL_MS_PER_TOKEN,
    seed: 1,
  });
}

const nats = process.env.NATS_URL ? { url: process.env.NATS_URL, stop: async () => undefined } : await startNats();
const policies = {};
const runs = Object.fromEntries(POLICIES.map((p) => [p.name, []]));
const started = performance.now();
try {
  // Each pass runs every policy, starting one further along the list, so no policy always runs first or last.
  for (let pass = 0; pass < PASSES; pass++)
    for (let k = 0; k < POLICIES.length; k++) {
      const p = POLICIES[(pass + k) % POLICIES.length];
      console.log(`pass ${pass + 1}/${PASSES} ${p.name}: live…`);
      const { done, ...summary } = await livePass(p, nats.url);
      runs[p.name].push({ done, summary });
      console.log(`pass ${pass + 1}/${PASSES} ${p.name}: ${JSON.stringify(summary)}`);
    }
  for (const p of POLICIES) {
    const live = { ...summarize(runs[p.name].flatMap((r) => r.done)), passes: runs[p.name].map((r) => r.summary) };
    const twin = twinPass(p);
    policies[p.name] = { live, twin, hit_rate_gap: live.hit_rate === null ? null : round(Math.abs(live.hit_rate - twin.hit_rate), 4) };
    console.log(`${p.name}: live ${JSON.stringify({ ...live, passes: undefined })}\n${p.name}: twin ${JSON.stringify(twin)}`);
  }
} finally {
  await nats.stop();
}

const names = Object.keys(policies);
const order = (side) =>
  [...names].sort((a, b) => (policies[a][side].ttft_mean_ms ?? Infinity) - (policies[b][side].ttft_mean_ms ?? Infinity));
// Pairs the live passes separate (means more than 10% apart): their order must be the twin's.
const pairs = names.flatMap((a, i) => names.slice(i + 1).map((b) => [a, b]));
const separated = pairs.filter(([a, b]) => {
  const [x, y] = [policies[a].live.ttft_mean_ms, policies[b].live.ttft_mean_ms];
  return x !== null && y !== null && Math.abs(x - y) > 0.1 * Math.min(x, y);
});
const agree = separated.filter(([a, b]) => {
  const live = policies[a].live.ttft_mean_ms < policies[b].live.ttft_mean_ms;
  return live === policies[a].twin.ttft_mean_ms < policies[b].twin.ttft_mean_ms;
});
// The routing issue's target on the trace: symphony at least as good as conductor at mean and p99 TTFT,
// judged per pass against the A-A spread of two symphony passes, as the multi-round benchmark judges it.
const passFigures = Array.from({ length: PASSES }, (_, i) => Object.fromEntries(names.map((n) => [n, runs[n][i].summary])));
const check = routingCheck(passFigures, ['conductor'], ['mean', 'p99']);
const gaps = names.map((n) => policies[n].hit_rate_gap).filter((g) => g !== null);
const json = {
  setup: {
    trace: FILE.startsWith(root) ? FILE.slice(root.length + 1) : FILE,
    from: FROM,
    limit: LIMIT,
    tokens_per_block: TOKENS_PER_BLOCK,
    time_scale: TIME_SCALE,
    max_output: MAX_OUTPUT,
    passes: PASSES,
    conductor_threshold: THRESHOLD,
    cluster: CLUSTER,
    dilation: DILATION,
    slice: stats,
  },
  policies,
  symphony_vs_conductor:
    policies.symphony && policies.conductor
      ? {
          ttft_mean: ratio(policies.conductor.live.ttft_mean_ms, policies.symphony.live.ttft_mean_ms, 3),
          ttft_p99: ratio(policies.conductor.live.ttft_p99_ms, policies.symphony.live.ttft_p99_ms, 3),
        }
      : null,
  per_pass: check.per_pass,
  noise: check.noise,
  routing_check: check.verdict,
  keys: {
    hit_rate_gap_max: gaps.length ? Math.max(...gaps) : null,
    live_order: order('live'),
    twin_order: order('twin'),
    separated_pairs: separated.length,
    separated_pairs_in_twin_order: agree.length,
    order_agrees: agree.length === separated.length,
    failed: names.reduce((a, n) => a + policies[n].live.failed, 0),
  },
  wall_s: round((performance.now() - started) / 1000, 1),
};
writeFileSync(join(root, 'bench/results/trace.json'), JSON.stringify(json, null, 2) + '\n');
console.log(JSON.stringify(json.keys));
