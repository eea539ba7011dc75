// Multi-round chat sessions on a cluster of node-managers, under the four routing policies in one
// run (Symphony §4's method, scaled to this machine): the same seeded ShareGPT-like workload,
// a fixed number of concurrent users, think time from reading and typing speeds, and (symphony
// only) an advisory when the user starts typing. Two extra symphony runs miss 10% of advisories
// and add 60% spurious ones. Every process is real (scheduler, node-managers, NATS); the nodes
// run the sim engine with a cost model for Llama-3.1-8B on one H100 (docs/symphony.md §Benchmark),
// slowed down 2× so two loaded CPU cores keep up with the timers and messages, and with real KV
// bytes (NODE_SIM_KV_BYTES, scaled down) that move through the nodes' host/SSD pools, NATS and gRPC.
// Writes bench/results/multiround.{json,svg}.
// Run: npm run bench -- multiround [--quick] [--users N] [--sessions N] [--passes N] [--no-peer-fetch] [--no-variants] [--promote-ab]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os, { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect } from '@nats-io/transport-node';
import { chunkKeys } from '@mnemo/kv-core';
import {
  AdvisoryReplySchema,
  AdvisoryRequestSchema,
  decodeMessage,
  encodeMessage,
  HeartbeatSchema,
  InferenceRequestSchema,
  ScheduleReplySchema,
  Subjects,
  } from '@mnemo/proto';
import { freePort, startNats } from '../tools/infra/index.mjs';
import { calibrateKvMoves } from './lib/kv-calibration.mjs';
import { launch, ready, stop } from './lib/services.mjs';
import { tokenStream } from './lib/token-stream.mjs';
import { svgDocument, ttftCdfParts } from './lib/ttft-cdf.mjs';
import { arg, clamp, counter, lognormal, median, percentile, rng, round } from './lib/figures.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const quick = process.argv.includes('--quick');
/** The scheduler may send kv_sources and weigh peer fetches (sim nodes with KV bytes use them); --no-peer-fetch: routing alone. */
const PEER_FETCH = process.argv.includes('--no-peer-fetch') ? 'off' : 'on';
/** --no-variants: only the four policies (no missed/spurious advisory runs), for a shorter run. */
const NO_VARIANTS = process.argv.includes('--no-variants');
/** --promote-ab: one more symphony run with prefetched chunks left in the host pool (NODE_PREFETCH_PROMOTE=off), the A/B of promotion to the device. */
const PROMOTE_AB = process.argv.includes('--promote-ab');
const MODEL = 'mnemo-medium';
const NODES = 4;
const USERS = Number(arg('users', quick ? 32 : 160));
const SESSIONS = Number(arg('sessions', quick ? 32 : 200));
/**
 * Users start one after another over this many seconds (default: the mean session's think time,
 * so the last user starts about when the first one ends a session). All at once, every user's
 * cold first turn met the others' in one burst at t = 0, and that start-up queue set every
 * policy's p99 rather than the steady state. `--ramp-s 0` starts them together.
 */
const RAMP_S = Number(arg('ramp-s', NaN));
/** Each configuration runs this many times, alternating the order of configurations, and the figures pool every pass: machine noise (other work on two shared cores) spreads over all of them. */
const PASSES = Number(arg('passes', quick ? 1 : 2));
/**
 * KV bytes of the sim nodes: 8 layers × 2 (K, V) × 4 float32 = 256 B per token (64 KiB per
 * chunk) against Llama-3.1-8B's 32 × 2 × 8 × 128 × 2 B = 128 KiB: 512× fewer bytes and 4× fewer
 * layers (each layer is one gRPC stream of a peer restore). Why: on this machine (2 cores shared
 * with other work) a chunk moves through host pool → gRPC → CRC → import at roughly 5–10 MB/s and
 * each stream costs a round trip of ~10 ms, against 100 Gb/s and PCIe Gen5 on the modelled
 * cluster; this scale brings the measured cost of moving a chunk near the modelled ratio to
 * recomputing it (≈ 0.4, see KV_MOVE_TARGET). The calibration below measures it every run and the
 * scheduler's cost model gets the measured figures.
 */
const KV_LAYOUT = { layers: 8, rowElems: 4 };
const KV_BYTES_PER_TOKEN = KV_LAYOUT.layers * 2 * KV_LAYOUT.rowElems * 4;
const REAL_KV_BYTES_PER_TOKEN = 32 * 2 * 8 * 128 * 2;
const SYSTEM_TOKENS = 300; // one shared system prompt: its first chunk is every session's
/** Time dilation: every modelled time (compute and think) is this many times the real one. */
const DILATION = 2;
/** Llama-3.1-8B (bf16) on one H100 SXM, per docs/symphony.md; × DILATION below. */
const GPU = { prefillTokenUs: 40, decodeStepMs: 6, decodeSeqUs: 50, decodeKContextUs: 38 };
/** Humans: reading ≈ 250 words/min ≈ 5.5 tokens/s, typing ≈ 40 words/min ≈ 0.9 tokens/s; think time is compressed 60× (load per user rises, nothing else changes). */
const READ_TOKENS_PER_S = 5.5;
const TYPE_TOKENS_PER_S = 0.9;
const THINK_COMPRESSION = 60;
/** Modelled cluster: a chunk from a peer's host pool (1.4 ms read + 2.7 ms network) over recomputing it (40 µs × 256): the ratio the scaled bytes aim at. */
const KV_MOVE_TARGET = (1.4 + 2.7) / ((GPU.prefillTokenUs * 256) / 1000);

// ---- seeded workload -------------------------------------------------------------------------
const text = (n, salt) => Array.from({ length: n }, (_, i) => (i * 37 + salt * 101 + 7) % 250);

/** ShareGPT-like: ≈75% multi-turn, mean ≈5.5 turns (long tail), 90% of user turns under 132 tokens, half the sessions paste a document. */
function workload(seed) {
  const r = rng(seed);
  const system = text(SYSTEM_TOKENS, 1);
  return Array.from({ length: SESSIONS }, (_, s) => {
    // 25% single-turn; the rest 2 + geometric (mean 7, capped at 20): overall mean ≈5.5.
    let turns = 1;
    if (r() > 0.25) for (turns = 2; turns < 20 && r() < 5 / 6; ) turns++;
    const doc = r() < 0.5 ? clamp(lognormal(r, 350, 0.9), 32, 2000) : 0;
    return {
      id: `s${s}`,
      system,
      doc: text(doc, 1000 + s),
      turns: Array.from({ length: turns }, (_, t) => {
        const user = clamp(lognormal(r, 40, 0.9), 4, 400);
        const reply = clamp(lognormal(r, 60, 0.5), 8, 200);
        return { user: text(user, s * 100 + t), reply, readMs: thinkMs(reply, READ_TOKENS_PER_S), typeMs: thinkMs(user, TYPE_TOKENS_PER_S), r: r() };
      }),
    };
  });
}
/** The ramp over which users start: `--ramp-s`, or the mean session's think time (read + type, every turn). */
const rampSeconds = (sessions) =>
  Number.isFinite(RAMP_S) ? Math.max(0, RAMP_S) : sessions.reduce((a, x) => a + x.turns.reduce((b, t) => b + t.readMs + t.typeMs, 0), 0) / sessions.length / 1000;
const thinkMs = (tokens, perS) => Math.round(((tokens / perS) * 1000 * DILATION) / THINK_COMPRESSION);

// ---- the cluster -----------------------------------------------------------------------------
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- one configuration -----------------------------------------------------------------------
/** Node environment of the KV store every sim node runs (host pool, one small SSD pool, fixed bandwidths so start-up measures nothing). */
const kvEnv = (dataDir, nodeId) => ({
  NODE_SIM_KV_BYTES: `${KV_LAYOUT.layers}x${KV_LAYOUT.rowElems}`,
  NODE_SIM_MAX_CONTEXT: '16384',
  NODE_DATA_DIR: join(dataDir, nodeId),
  NODE_KV_HOST_POOL: '64MiB',
  NODE_KV_SSD_POOLS: `${join(dataDir, nodeId, 'ssd-0.pool')}=128MiB`,
  NODE_KV_BANDWIDTHS: '10,2',
});

async function runConfig(name, { policy, advisories, missed = 0, spurious = 0, nodeEnv = {} }, natsUrl, sessions, costs, benchDir) {
  // A fresh data directory per run: a node would otherwise replay the SSD journal an earlier pass left under its id.
  const dataDir = mkdtempSync(join(benchDir, `${name}-`));
  const common = { NATS_URL: natsUrl, LOG_LEVEL: 'error', METRICS_HOST: '127.0.0.1' };
  const schedPort = await freePort();
  const scheduler = launch('scheduler', {
    ...common,
    METRICS_PORT: String(schedPort),
    SCHEDULER_POLICY: policy,
    SCHEDULER_PEER_FETCH: PEER_FETCH,
    SCHEDULER_PREFILL_US_PER_TOKEN: String(GPU.prefillTokenUs * DILATION),
    // Moving a chunk as measured on this machine by the calibration (host and SSD reads, peer pulls).
    SCHEDULER_HOST_LOAD_US_PER_CHUNK: String(Math.round(costs.hostMs * 1000)),
    SCHEDULER_SSD_LOAD_US_PER_CHUNK: String(Math.round(costs.ssdMs * 1000)),
    SCHEDULER_PEER_US_PER_CHUNK: String(Math.round(costs.peerMs * 1000)),
    SCHEDULER_QUEUE_MS_PER_REQUEST: String(20 * DILATION),
    SCHEDULER_MOVE_MARGIN_MS: String(20 * DILATION),
    SCHEDULER_NODE_TIMEOUT_MS: '3000',
  });
  const nodes = [];
  for (let i = 0; i < NODES; i++) {
    const port = await freePort();
    nodes.push({
      port,
      child: launch('node-manager', {
        ...common,
        METRICS_PORT: String(port),
        NODE_ID: `mr-${name}-${i}`,
        ...kvEnv(dataDir, `mr-${name}-${i}`),
        NODE_ENGINE: 'sim',
        NODE_MODELS: MODEL,
        NODE_MAX_BATCH: '16',
        NODE_KV_BLOCKS: '2048',
        NODE_HEARTBEAT_MS: '200',
        NODE_SIM_PREFILL_TOKEN_US: String(GPU.prefillTokenUs * DILATION),
        NODE_SIM_DECODE_STEP_MS: String(GPU.decodeStepMs * DILATION),
        NODE_SIM_DECODE_SEQ_US: String(GPU.decodeSeqUs * DILATION),
        NODE_SIM_DECODE_KCONTEXT_US: String(GPU.decodeKContextUs * DILATION),
        ...nodeEnv,
      }),
    });
  }
  const nc = await connect({ servers: natsUrl });
  const load = new Map();
  let sampling = false;
  const hb = nc.subscribe(Subjects.HEARTBEAT, {
    callback: (_e, m) => {
      if (!sampling) return;
      const h = decodeMessage(HeartbeatSchema, m.data);
      const s = load.get(h.nodeId) ?? { sum: 0, n: 0 };
      s.sum += h.running + h.waiting;
      s.n++;
      load.set(h.nodeId, s);
    },
  });
  try {
    await Promise.all([ready(schedPort), ...nodes.map((n) => ready(n.port))]);
    await sleep(600); // every node heartbeated into the scheduler
    const tenant = `mr-${name}`;
    const results = [];
    const adv = { sent: 0, failed: 0, spurious: 0, missed: 0 };
    const finished = [];
    let next = 0;
    sampling = true;
    const t0 = performance.now();
    const rampMs = rampSeconds(sessions) * 1000;
    await Promise.all(
      Array.from({ length: USERS }, async (_, u) => {
        await sleep((u * rampMs) / USERS);
        for (let s = next++; s < sessions.length; s = next++) {
          results.push(...(await converse(nc, tenant, sessions[s], { advisories, missed, spurious, adv, finished })));
          finished.push(sessions[s].id);
        }
      }),
    );
    const wallS = (performance.now() - t0) / 1000;
    sampling = false;
    const schedMetrics = await (await fetch(`http://127.0.0.1:${schedPort}/metrics`)).text();
    // KV bytes pulled between nodes (peer restores and prefetches), where the nodes export those counters.
    let movedBytes = 0;
    const kv = { peerRestoredTokens: 0, tierRestoredTokens: 0, restoreFailures: 0, peerBlockedS: 0, prefetchedBytes: 0, promoted: { staged: 0, used: 0, purged: 0, unstaged: 0 } };
    for (const n of nodes) {
      const text = await (await fetch(`http://127.0.0.1:${n.port}/metrics`)).text();
      // Every verified pull, by a restore or an advisory prefetch (prefetch bytes are a part of it).
      movedBytes += counter(text, 'mnemo_kv_peer_fetch_bytes_total');
      kv.prefetchedBytes += counter(text, 'mnemo_kv_prefetch_bytes_total');
      kv.peerRestoredTokens += counter(text, 'mnemo_kv_peer_restored_tokens_total');
      kv.tierRestoredTokens += counter(text, 'mnemo_kv_hit_tokens_total');
      kv.restoreFailures += counter(text, 'mnemo_kv_peer_restore_failures_total') + counter(text, 'mnemo_kv_restore_failures_total');
      kv.peerBlockedS += counter(text, 'mnemo_kv_peer_blocked_seconds_total');
      kv.promoted.staged += counter(text, 'mnemo_kv_prefetch_promoted_chunks_total');
      kv.promoted.used += counter(text, 'mnemo_kv_prefetch_promoted_used_total');
      kv.promoted.purged += counter(text, 'mnemo_kv_prefetch_promoted_purged_total');
      kv.promoted.unstaged += counter(text, 'mnemo_kv_prefetch_promoted_unstaged_total');
    }
    return { results, wallS, load: [...load].map(([id, s]) => [id, s.sum / Math.max(1, s.n)]), adv, schedMetrics, movedBytes, kv };
  } finally {
    hb.unsubscribe();
    await nc.close();
    await Promise.all([...nodes.map((n) => stop(n.child)), stop(scheduler)]);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** One session: each turn's prompt is the whole history; between turns the user reads, then types (the advisory goes out when typing starts). */
async function converse(nc, tenant, session, o) {
  const out = [];
  let history = [...session.system, ...session.doc];
  for (const [t, turn] of session.turns.entries()) {
    const prompt = [...history, ...turn.user];
    if (prompt.length + turn.reply > 15_000) break;
    if (t > 0) {
      await sleep(session.turns[t - 1].readMs);
      if (o.advisories) {
        // turn.r is drawn once per turn in the workload, so every run misses / adds the same ones.
        if (turn.r < o.missed) o.adv.missed++;
        else void advise(nc, tenant, session.id, turn.typeMs, o.adv);
        if (turn.r >= 1 - o.spurious && o.finished.length > 0) {
          // A spurious advisory: a session that has ended "starts typing" and never sends.
          o.adv.spurious++;
          void advise(nc, tenant, o.finished[Math.floor(turn.r * 7919) % o.finished.length], turn.typeMs, o.adv);
        }
      }
    }
    await sleep(turn.typeMs);
    const r = await infer(nc, `${tenant}-${session.id}-${t}`, tenant, session.id, prompt, turn.reply);
    out.push({ session: session.id, turn: t, promptTokens: prompt.length, ...r });
    history = [...prompt, ...r.tokens];
  }
  return out;
}

async function advise(nc, tenant, sessionId, typeMs, counts) {
  counts.sent++;
  try {
    const payload = encodeMessage(AdvisoryRequestSchema, { tenant, sessionId, model: MODEL, expectedArrivalUnixMs: Date.now() + typeMs });
    const reply = decodeMessage(AdvisoryReplySchema, (await nc.request(Subjects.ADVISE, payload, { timeout: 10_000 })).data);
    if (reply.result.case !== 'advisory') counts.failed++;
  } catch {
    counts.failed++;
  }
}

async function infer(nc, requestId, tenant, sessionId, tokens, maxTokens) {
  const stream = tokenStream(nc);
  const request = {
    requestId: `${requestId}-${Math.random().toString(36).slice(2, 8)}`,
    tenant,
    sessionId,
    model: MODEL,
    tokens,
    chunkKeys: chunkKeys(MODEL, tenant, tokens),
    sampling: { temperature: 0, topP: 1, maxTokens, seed: 1n },
    replySubject: stream.inbox,
    deadlineUnixMs: Date.now() + 600_000,
  };
  const reply = decodeMessage(ScheduleReplySchema, (await nc.request(Subjects.SCHEDULE, encodeMessage(InferenceRequestSchema, request), { timeout: 60_000 })).data);
  if (reply.result.case !== 'nodeId') throw new Error(`not scheduled: ${JSON.stringify(reply.result.value)}`);
  const { ttftMs, cachedTokens, tokens: generated } = await stream.finish();
  const totalMs = performance.now() - stream.t0;
  return { ttftMs, tpotMs: generated.length > 1 ? (totalMs - ttftMs) / (generated.length - 1) : null, cachedTokens, tokens: generated, node: reply.result.value };
}

/** Two passes of one configuration as one: requests and counters add up, per-node load averages (node ids repeat per pass). */
function pool(a, b) {
  const loads = new Map(a.load.map(([id, l]) => [id, [l]]));
  for (const [id, l] of b.load) loads.set(id, [...(loads.get(id) ?? []), l]);
  const adv = Object.fromEntries(Object.keys(a.adv).map((k) => [k, a.adv[k] + b.adv[k]]));
  const sum = (x, y) => (typeof x === 'object' ? Object.fromEntries(Object.keys(x).map((k) => [k, sum(x[k], y[k])])) : x + y);
  const kv = sum(a.kv, b.kv);
  return { results: [...a.results, ...b.results], kv, movedBytes: a.movedBytes + b.movedBytes, wallS: a.wallS + b.wallS, load: [...loads].map(([id, ls]) => [id, ls.reduce((x, y) => x + y, 0) / ls.length]), adv, schedMetrics: a.schedMetrics + '\n' + b.schedMetrics };
}

// ---- figures ---------------------------------------------------------------------------------

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
    return { requests: xs.length, ttft_p50_ms: round(percentile(t, 50)), ttft_p99_ms: round(percentile(t, 99)), recomputed_tokens: xs.reduce((s, x) => s + x.promptTokens - x.cachedTokens, 0) };
  };
  const p99 = percentile(ttft, 99);
  const tail = results.map((x, i) => ({ x, kind: kinds[i] })).filter(({ x }) => x.ttftMs >= p99).sort((a, b) => b.x.ttftMs - a.x.ttftMs);
  return {
    by_move: { first: group('first'), stayed: group('stayed'), moved: group('moved') },
    p99_tail: tail.map(({ x, kind }) => ({ ttft_ms: round(x.ttftMs), kind, turn: x.turn, prompt_tokens: x.promptTokens, recomputed_tokens: x.promptTokens - x.cachedTokens })),
  };
}

function summarize(r) {
  const ttft = r.results.map((x) => x.ttftMs);
  const tpot = r.results.map((x) => x.tpotMs);
  const prompt = r.results.reduce((s, x) => s + x.promptTokens, 0);
  const cached = r.results.reduce((s, x) => s + x.cachedTokens, 0);
  const out = r.results.reduce((s, x) => s + x.tokens.length, 0);
  const loads = r.load.map(([, l]) => l);
  const reasons = ['least_loaded', 'reservation', 'session_home', 'longest_prefix', 'cheapest'];
  return {
    requests: r.results.length,
    wall_s: round(r.wallS, 1),
    ttft_p50_ms: round(percentile(ttft, 50)),
    ttft_p99_ms: round(percentile(ttft, 99)),
    ttft_mean_ms: round(ttft.reduce((a, b) => a + b, 0) / ttft.length),
    tpot_p50_ms: round(percentile(tpot, 50)),
    tpot_p99_ms: round(percentile(tpot, 99)),
    throughput_tokens_per_s: round(out / r.wallS, 1),
    mean_active_per_node: Object.fromEntries(r.load.map(([id, l]) => [id, round(l)])),
    // Null when the median node was idle the whole run (the ratio is unbounded).
    imbalance_max_over_median: median(loads) > 0 ? round(Math.max(...loads) / median(loads)) : null,
    // max/median hides a node left idle (prefix-affinity's failure): say so.
    imbalance_max_over_min: Math.min(...loads) > 0 ? round(Math.max(...loads) / Math.min(...loads)) : null,
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
    peer_blocked_s: round(r.kv.peerBlockedS),
    routing: Object.fromEntries(reasons.map((k) => [k, counter(r.schedMetrics, 'mnemo_scheduler_routing_decisions_total', { reason: k })]).filter(([, v]) => v > 0)),
    ...byMove(r.results, ttft),
    advisories: { ...r.adv, reservations_hit: counter(r.schedMetrics, 'mnemo_scheduler_reservations_used_total', { outcome: 'hit' }), reservations_moved: counter(r.schedMetrics, 'mnemo_scheduler_reservations_used_total', { outcome: 'moved' }) },
  };
}

const COLORS = { symphony: '#1b7837', recompute: '#b2182b', sticky: '#2166ac', 'prefix-affinity': '#e08214', 'symphony-missed10': '#7fbc41', 'symphony-spurious60': '#8073ac', 'symphony-host-only': '#35978f' };
function svg(runs, summaries) {
  const W = 900, H = 340, L = 60, B = 40, PW = 520;
  const parts = ttftCdfParts(runs, COLORS, { L, B, H, right: PW });
  // Per-node mean active requests, one group of bars per run.
  const names = Object.keys(summaries);
  const maxLoad = Math.max(0.1, ...names.flatMap((n) => Object.values(summaries[n].mean_active_per_node)));
  const gx = PW + 20, gw = (W - gx - 10) / names.length;
  names.forEach((n, i) => {
    const loads = Object.values(summaries[n].mean_active_per_node);
    const bw = (gw - 8) / Math.max(1, loads.length);
    loads.forEach((l, j) => {
      const h = ((H - B - 30) * l) / maxLoad;
      parts.push(`<rect x="${(gx + i * gw + j * bw).toFixed(1)}" y="${(H - B - h).toFixed(1)}" width="${(bw - 1).toFixed(1)}" height="${h.toFixed(1)}" fill="${COLORS[n]}"/>`);
    });
    parts.push(`<text x="${(gx + i * gw + gw / 2 - 4).toFixed(1)}" y="${H - B + 12}" font-size="8" text-anchor="end" transform="rotate(-35 ${(gx + i * gw + gw / 2 - 4).toFixed(1)} ${H - B + 12})">${n}</text>`);
  });
  parts.push(`<text x="${(gx + W) / 2}" y="16" font-size="12" text-anchor="middle">mean active requests per node</text><line x1="${gx}" y1="${H - B}" x2="${W - 10}" y2="${H - B}" stroke="#333"/>`);
  return svgDocument(W, H, parts);
}

// ---- main ------------------------------------------------------------------------------------
const sessions = workload(20261123);
const nats = process.env.NATS_URL ? { url: process.env.NATS_URL, stop: async () => undefined } : await startNats();
const dataDir = mkdtempSync(join(tmpdir(), 'mnemo-multiround-'));
try {
  console.log(`calibrating KV moves (${KV_LAYOUT.layers}x${KV_LAYOUT.rowElems}, ${KV_BYTES_PER_TOKEN} B per token)…`);
  const cal = await calibrateKvMoves({ natsUrl: nats.url, model: MODEL, nodeEnv: kvEnv(dataDir, 'calibrate'), dataDir });
  // The scheduler's peer figure is on top of the peer's tier read; SSD was not measured: it keeps the modelled SSD/host ratio (5.5 / 1.4).
  const costs = { hostMs: cal.hostLoadMsPerChunk, peerMs: Math.max(0, cal.peerPullMsPerChunk - cal.hostLoadMsPerChunk), ssdMs: Math.max(cal.hostLoadMsPerChunk, 0.1) * (5.5 / 1.4) };
  const recomputeMs = (GPU.prefillTokenUs * DILATION * 256) / 1000;
  console.log('calibration', JSON.stringify({ ...cal, costs, recomputeMs }));
  const configs = {
    symphony: { policy: 'symphony', advisories: true },
    recompute: { policy: 'recompute', advisories: false },
    sticky: { policy: 'sticky', advisories: false },
    'prefix-affinity': { policy: 'prefix-affinity', advisories: false },
    ...(NO_VARIANTS
      ? {}
      : {
          'symphony-missed10': { policy: 'symphony', advisories: true, missed: 0.1 },
          'symphony-spurious60': { policy: 'symphony', advisories: true, spurious: 0.6 },
        }),
    ...(PROMOTE_AB ? { 'symphony-host-only': { policy: 'symphony', advisories: true, nodeEnv: { NODE_PREFETCH_PROMOTE: 'off' } } } : {}),
  };
  const runs = {};
  for (let pass = 0; pass < PASSES; pass++) {
    const order = pass % 2 === 0 ? Object.entries(configs) : Object.entries(configs).reverse();
    for (const [name, c] of order) {
      console.log(`pass ${pass + 1}/${PASSES}: running ${name}…`);
      const r = await runConfig(name, c, nats.url, sessions, costs, dataDir);
      console.log(name, JSON.stringify(summarize(r)));
      runs[name] = runs[name] ? pool(runs[name], r) : r;
    }
  }
  const s = Object.fromEntries(Object.entries(runs).map(([k, r]) => [k, summarize(r)]));
  const turns = sessions.map((x) => x.turns.length);
  const users = sessions.flatMap((x) => x.turns.map((t) => t.user.length));
  const p99 = (n) => s[n].ttft_p99_ms;
  const result = {
    model: `${MODEL} (sim engine; cost model: Llama-3.1-8B bf16 on one H100 SXM, ×${DILATION} time dilation)`,
    env: { cpu_threads: cpus().length, load_average_at_end: os.loadavg().map((x) => round(x, 1)), quick, nodes: NODES, users: USERS, passes: PASSES, scheduler_peer_fetch: PEER_FETCH },
    kv_bytes: {
      layout: `${KV_LAYOUT.layers} layers × ${KV_LAYOUT.rowElems} floats per K/V row (NODE_SIM_KV_BYTES=${KV_LAYOUT.layers}x${KV_LAYOUT.rowElems})`,
      bytes_per_token: KV_BYTES_PER_TOKEN,
      bytes_per_chunk: KV_BYTES_PER_TOKEN * 256,
      modelled_bytes_per_token: REAL_KV_BYTES_PER_TOKEN,
      byte_scale: REAL_KV_BYTES_PER_TOKEN / KV_BYTES_PER_TOKEN,
      why: 'this machine moves a chunk through host pool, gRPC, CRC32C and the import at a few MB/s (2 shared cores under load) against 100 Gb/s in the modelled cluster; bytes are scaled so that moving a chunk costs about what the modelled cluster pays relative to recomputing it, and the scheduler is given the measured costs',
      measured_ms_per_chunk: { peer_pull: round(cal.peerPullMsPerChunk), host_restore: round(cal.hostLoadMsPerChunk), samples: { peer: cal.samples.peer.map((x) => round(x)), host: cal.samples.host.map((x) => round(x)) } },
      scheduler_costs_ms_per_chunk: { host: round(costs.hostMs), ssd: round(costs.ssdMs), peer_network: round(costs.peerMs), recompute: round(recomputeMs) },
      move_over_recompute: { measured: round(cal.peerPullMsPerChunk / recomputeMs), modelled_cluster: round(KV_MOVE_TARGET) },
    },
    cost_model: { ...Object.fromEntries(Object.entries(GPU).map(([k, v]) => [k, v * DILATION])), dilation: DILATION, undilated: GPU },
    workload: {
      sessions: SESSIONS,
      requests: s.symphony.requests,
      mean_turns: round(turns.reduce((a, b) => a + b, 0) / turns.length),
      multi_turn_share: round(turns.filter((t) => t > 1).length / turns.length),
      user_turn_p90_tokens: percentile(users, 90),
      system_tokens: SYSTEM_TOKENS,
      users_start_over_s: round(rampSeconds(sessions)),
      think: `reading ${READ_TOKENS_PER_S} tok/s, typing ${TYPE_TOKENS_PER_S} tok/s, ×${DILATION}/${THINK_COMPRESSION}; advisory when typing starts`,
      note: 'synthetic ShareGPT-like sessions (seeded); prompts are token ids; the same workload for every run; sim nodes keep real (scaled) KV bytes: chunks are written through to host/SSD pools and pulled by peers (kv_sources) or advisory prefetch',
    },
    policies: Object.fromEntries(['symphony', 'recompute', 'sticky', 'prefix-affinity'].map((k) => [k, s[k]])),
    variants: NO_VARIANTS ? 'not run (--no-variants)' : { 'symphony-missed10': s['symphony-missed10'], 'symphony-spurious60': s['symphony-spurious60'] },
    symphony_vs_recompute_ttft_p99: round(p99('recompute') / p99('symphony')),
    symphony_vs_sticky_ttft_p99: round(p99('sticky') / p99('symphony')),
    symphony_vs_prefix_affinity_ttft_p99: round(p99('prefix-affinity') / p99('symphony')),
    missed10_degradation: NO_VARIANTS ? null : round(p99('symphony-missed10') / p99('symphony') - 1, 3),
    spurious60_degradation: NO_VARIANTS ? null : round(p99('symphony-spurious60') / p99('symphony') - 1, 3),
    ...(PROMOTE_AB
      ? {
          promotion_ab: {
            'symphony-host-only': s['symphony-host-only'],
            // Above 1: promotion to the device made symphony faster than leaving prefetched chunks in the host pool.
            host_only_over_promoted_ttft_p50: round(s['symphony-host-only'].ttft_p50_ms / s.symphony.ttft_p50_ms),
            host_only_over_promoted_ttft_p99: round(p99('symphony-host-only') / p99('symphony')),
          },
        }
      : {}),
  };
  mkdirSync(join(root, 'bench/results'), { recursive: true });
  writeFileSync(join(root, 'bench/results/multiround.json'), JSON.stringify(result, null, 2) + '\n');
  writeFileSync(join(root, 'bench/results/multiround.svg'), svg(runs, s));
  console.log(JSON.stringify(result, null, 2));
} finally {
  await nats.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
