// Multi-round chat sessions through the real node path (NATS → scheduler → node-manager with the
// reference engine, each a separate process), four ways in one run on the same seeded workload:
//   mnemo        device prefix cache + host pool + SSD pool, the device's reusable blocks and the
//                host pool deliberately too small so turns come back from the SSD pool;
//   apc-small    the same device prefix cache with the same bound on reusable blocks, no tiers:
//                vLLM's automatic prefix caching when histories outgrow the GPU (the baseline
//                LMCache-style tiers exist for);
//   device-only  an unbounded device prefix cache, no store: nothing ever leaves the device (vLLM
//                with the whole device for reuse: the ideal);
//   recompute    no prefix cache, no store: every turn prefills its whole history (a lower bound,
//                not vLLM: vLLM caches prefixes).
// Sessions follow ShareGPT-like statistics: a shared system prompt, mean ≈5.5 turns (≈75%
// multi-turn, geometric tail up to 24 turns), short user turns (90% of prompts under 132 tokens,
// counting the first turns that paste a document) and replies, think time between turns. History
// is long-tailed because sessions are: it grows turn by turn. TTFT is measured at the client:
// request sent → first token.
// Writes bench/results/multiturn.json (figure: bench/figures/multiturn.figure.mjs). Run: npm run bench -- multiturn [--quick] [--cold (adds mnemo with NODE_KV_WARM=off)]
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { clamp, counter, histogramQuantile, lognormal, percentile, rng, round, scrapeMetrics, startNats } from '@mnemo/testkit';
import { withSchedulerAndNode } from './lib/services.mjs';
import { inferViaScheduler } from './lib/scheduler-infer.mjs';
import { quick, root } from './lib/bench.args.mjs';

const MODEL = 'mnemo-medium';
const USERS = 6;
const USER_STAGGER_MS = 500;
const SESSIONS = quick ? 8 : 24;
const SYSTEM_TOKENS = 192;
// Every configuration has the same device memory for running requests (4,096 blocks), so the
// comparison is about where reused KV comes from, not about admission waiting for memory. Mnemo
// keeps at most 96 reusable blocks (1,536 tokens) on the device — far less than the six live
// sessions' histories (up to 6 × 3,800 tokens) — so turns come back from host and SSD.
const DEVICE_BLOCKS = 4096;
const KV_BLOCKS_SMALL = 96;
// A session ends once its next turn would not fit the model's context (4,096 tokens) with room to spare.
const MAX_HISTORY = 3800;
const MAX_TURNS = 24;
// ShareGPT: about one first prompt in five pastes material (code, an article); the rest are short.
const DOC_SHARE = 0.2;
const HOST_POOL = '16MiB'; // 4 chunks of mnemo-medium (4 MiB each): most history lives on SSD

// ---- seeded workload -------------------------------------------------------------------------

/**
 * Turns per session: 25% single-turn, the rest 2 + a geometric count with mean 5 (overall mean
 * 5.5), drawn at stratified quantiles in seeded order so that 24 sessions have the stated shares
 * and mean rather than whatever one small sample gives.
 */
function sessionTurns(r) {
  const u = Array.from({ length: SESSIONS }, (_, i) => (i + 0.5) / SESSIONS);
  for (let i = u.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [u[i], u[j]] = [u[j], u[i]];
  }
  return u.map((q) => (q < 0.25 ? 1 : Math.min(MAX_TURNS, 2 + Math.floor(Math.log(1 - (q - 0.25) / 0.75) / Math.log(5 / 6)))));
}

function workload(seed) {
  const r = rng(seed);
  const text = (n, salt) => Array.from({ length: n }, (_, i) => (i * 37 + salt * 101 + 7) % 250);
  const system = text(SYSTEM_TOKENS, 1);
  const turnsOf = sessionTurns(r);
  return Array.from({ length: SESSIONS }, (_, s) => {
    const turns = turnsOf[s];
    const doc = r() < DOC_SHARE ? clamp(lognormal(r, 300, 0.8), 32, 1000) : 0;
    return {
      id: s,
      doc: text(doc, 1000 + s),
      turns: Array.from({ length: turns }, (_, t) => {
        const user = clamp(lognormal(r, 36, 0.8), 4, 200);
        const reply = clamp(lognormal(r, 40, 0.5), 12, 120);
        // Reading the reply and typing the next turn, at 20× human speed to keep the run short.
        return { user: text(user, s * 100 + t), reply, thinkMs: Math.round((reply * 250 + user * 300) / 20) };
      }),
    };
  }).map((s) => ({ ...s, system }));
}

// ---- one configuration -----------------------------------------------------------------------
async function runConfig(name, nodeEnv, natsUrl, sessions) {
  const nodeEnvOf = (dataDir) => ({
    NODE_ID: `bench-${name}`,
    NODE_ENGINE: 'reference',
    NODE_MODELS: MODEL,
    NODE_MAX_BATCH: '8',
    NODE_KV_SSD_POOLS: `${join(dataDir, 'ssd-0.pool')}=1GiB`,
    ...nodeEnv,
  });
  return withSchedulerAndNode({ natsUrl, dataPrefix: `mnemo-multiturn-${name}-`, nodeEnv: nodeEnvOf }, async ({ nc, nodePort }) => {
    await warmup(nc);
    const results = [];
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: USERS }, async (_, u) => {
        // Users arrive one after another, not in one burst: six cold prompts prefilled together
        // would be the slowest requests of every configuration and set p99 for all of them.
        await new Promise((res) => setTimeout(res, u * USER_STAGGER_MS));
        for (let s = next++; s < sessions.length; s = next++) results.push(...(await converse(nc, name, sessions[s])));
      }),
    );
    const wallS = (performance.now() - t0) / 1000;
    const metrics = await scrapeMetrics(nodePort);
    return { results, wallS, metrics };
  });
}

async function warmup(nc) {
  const s = { id: 'warm', system: [1, 2, 3], doc: [], turns: [{ user: [4, 5, 6], reply: 4, thinkMs: 0 }] };
  await converse(nc, 'warmup', s);
}

/** One session: each turn's prompt is the whole history (system, document, every turn and reply) plus the new user turn. */
async function converse(nc, tenant, session) {
  const out = [];
  let history = [...session.system, ...session.doc];
  for (const [t, turn] of session.turns.entries()) {
    const prompt = [...history, ...turn.user];
    if (prompt.length + turn.reply > MAX_HISTORY) break;
    const r = await infer(nc, `${tenant}-${session.id}-${t}`, tenant, prompt, turn.reply);
    out.push({ session: session.id, turn: t, promptTokens: prompt.length, ...r });
    history = [...prompt, ...r.tokens];
    if (t + 1 < session.turns.length) await new Promise((res) => setTimeout(res, turn.thinkMs));
  }
  return out;
}

async function infer(nc, requestId, tenant, tokens, maxTokens) {
  const {
    ttftMs,
    cachedTokens,
    tokens: generated,
  } = await inferViaScheduler(nc, {
    requestId,
    tenant,
    model: MODEL,
    tokens,
    maxTokens,
    deadlineMs: 300_000,
  });
  return { ttftMs, cachedTokens, tokens: generated };
}

// ---- figures ---------------------------------------------------------------------------------

function summarize(r) {
  const ttft = r.results.map((x) => x.ttftMs);
  const prompt = r.results.reduce((s, x) => s + x.promptTokens, 0);
  const cached = r.results.reduce((s, x) => s + x.cachedTokens, 0);
  return {
    requests: r.results.length,
    wall_s: round(r.wallS, 1),
    ttft_p50_ms: round(percentile(ttft, 50)),
    ttft_p90_ms: round(percentile(ttft, 90)),
    ttft_p99_ms: round(percentile(ttft, 99)),
    prompt_tokens: prompt,
    cached_tokens: cached,
    prefix_hit_rate: round(cached / prompt, 3),
    blocked_io_ms_p50: round((histogramQuantile(r.metrics, 'mnemo_kv_blocked_io_seconds', 0.5) ?? NaN) * 1000, 3),
    blocked_io_ms_p99: round((histogramQuantile(r.metrics, 'mnemo_kv_blocked_io_seconds', 0.99) ?? NaN) * 1000, 3),
    restored_tokens: {
      host: counter(r.metrics, 'mnemo_kv_hit_tokens_total', { tier: 'host' }),
      ssd: counter(r.metrics, 'mnemo_kv_hit_tokens_total', { tier: 'ssd' }),
    },
    preemptions: counter(r.metrics, 'mnemo_node_preemptions_total'),
    warm_restores: Object.fromEntries(
      ['used', 'stale', 'expired'].map((o) => [o, counter(r.metrics, 'mnemo_kv_warm_restores_total', { outcome: o })]),
    ),
  };
}

/** Per request, the prompt tokens its turn added (the user turn; on a first turn, system prompt aside, the pasted document too). */
function newPromptTokens(results) {
  const bySession = new Map();
  for (const x of results) bySession.set(x.session, [...(bySession.get(x.session) ?? []), x]);
  const out = [];
  for (const rs of bySession.values()) {
    rs.sort((a, b) => a.turn - b.turn);
    rs.forEach((x, i) =>
      out.push(i === 0 ? x.promptTokens - SYSTEM_TOKENS : x.promptTokens - rs[i - 1].promptTokens - rs[i - 1].tokens.length),
    );
  }
  return out;
}

// ---- main ------------------------------------------------------------------------------------
const sessions = workload(20261123);
const nats = process.env.NATS_URL ? { url: process.env.NATS_URL, stop: async () => undefined } : await startNats();
try {
  const configs = {
    mnemo: { NODE_KV_BLOCKS: String(DEVICE_BLOCKS), NODE_PREFIX_CACHE_BLOCKS: String(KV_BLOCKS_SMALL), NODE_KV_HOST_POOL: HOST_POOL },
    'apc-small': { NODE_KV_BLOCKS: String(DEVICE_BLOCKS), NODE_PREFIX_CACHE_BLOCKS: String(KV_BLOCKS_SMALL), NODE_KV_STORE: 'off' },
    recompute: { NODE_KV_BLOCKS: String(DEVICE_BLOCKS), NODE_PREFIX_CACHE: 'off', NODE_KV_STORE: 'off' },
    'device-only': { NODE_KV_BLOCKS: String(DEVICE_BLOCKS), NODE_KV_STORE: 'off' },
    // --cold: Mnemo again with restores that start reading at their pass, not on arrival (A/B of NODE_KV_WARM).
    ...(process.argv.includes('--cold')
      ? {
          'mnemo-cold': {
            NODE_KV_BLOCKS: String(DEVICE_BLOCKS),
            NODE_PREFIX_CACHE_BLOCKS: String(KV_BLOCKS_SMALL),
            NODE_KV_HOST_POOL: HOST_POOL,
            NODE_KV_WARM: 'off',
          },
        }
      : {}),
  };
  const runs = {};
  for (const [name, env] of Object.entries(configs)) {
    console.log(`running ${name}…`);
    runs[name] = await runConfig(name, env, nats.url, sessions);
    console.log(name, JSON.stringify(summarize(runs[name])));
  }
  const s = Object.fromEntries(Object.entries(runs).map(([k, r]) => [k, summarize(r)]));
  const turns = sessions.map((x) => x.turns.length);
  const result = {
    model: MODEL,
    env: {
      cpu_threads: os.cpus().length,
      load_average_at_end: os.loadavg().map((x) => round(x, 1)),
      contention:
        'measured on a shared 2-core machine while other engineers built and tested and a model trained in the background; the configurations run one after another on the same workload, so the ratios between them are what counts',
      quick,
    },
    workload: {
      users: USERS,
      sessions: SESSIONS,
      mean_turns: round(turns.reduce((a, b) => a + b, 0) / turns.length),
      multi_turn_share: round(turns.filter((t) => t > 1).length / turns.length),
      // What was served (a session stops early once its history nears the context).
      mean_turns_served: round(runs.mnemo.results.length / sessions.length),
      new_prompt_tokens_p90: percentile(newPromptTokens(runs.mnemo.results), 90),
      history_tokens_p50: percentile(
        runs.mnemo.results.map((x) => x.promptTokens),
        50,
      ),
      history_tokens_max: Math.max(...runs.mnemo.results.map((x) => x.promptTokens)),
      system_tokens: SYSTEM_TOKENS,
      note: 'synthetic ShareGPT-like sessions (seeded); prompts are token ids; greedy replies; the same workload for every configuration',
    },
    configs: {
      mnemo: `NODE_KV_BLOCKS=${DEVICE_BLOCKS}, NODE_PREFIX_CACHE_BLOCKS=${KV_BLOCKS_SMALL} (reusable blocks kept on the device), host pool ${HOST_POOL}, SSD pool 1GiB`,
      'apc-small': `NODE_KV_BLOCKS=${DEVICE_BLOCKS}, NODE_PREFIX_CACHE_BLOCKS=${KV_BLOCKS_SMALL} (the device budget Mnemo's own cache gets), store off`,
      recompute: `NODE_KV_BLOCKS=${DEVICE_BLOCKS}, prefix cache off, store off`,
      'device-only': `NODE_KV_BLOCKS=${DEVICE_BLOCKS}, store off`,
    },
    results: s,
    requests: Object.fromEntries(
      Object.entries(runs).map(([k, r]) => [
        k,
        r.results.map((x) => [x.session, x.turn, x.promptTokens, x.cachedTokens, round(x.ttftMs, 1)]),
      ]),
    ),
    requests_columns: ['session', 'turn', 'prompt_tokens', 'cached_tokens', 'ttft_ms'],
    // The headline: vLLM-style prefix caching on the device budget Mnemo's cache gets, against Mnemo with its tiers.
    ttft_p99_apc_small_over_mnemo: round(s['apc-small'].ttft_p99_ms / s.mnemo.ttft_p99_ms),
    ttft_p50_apc_small_over_mnemo: round(s['apc-small'].ttft_p50_ms / s.mnemo.ttft_p50_ms),
    ttft_p99_recompute_over_mnemo: round(s.recompute.ttft_p99_ms / s.mnemo.ttft_p99_ms),
    ttft_p50_recompute_over_mnemo: round(s.recompute.ttft_p50_ms / s.mnemo.ttft_p50_ms),
    ttft_p50_mnemo_over_device_only: round(s.mnemo.ttft_p50_ms / s['device-only'].ttft_p50_ms),
    ...(s['mnemo-cold'] ? { ttft_p50_mnemo_cold_over_device_only: round(s['mnemo-cold'].ttft_p50_ms / s['device-only'].ttft_p50_ms) } : {}),
    blocked_io_ms_p99: s.mnemo.blocked_io_ms_p99,
    prefix_hit_rate: s.mnemo.prefix_hit_rate,
  };
  mkdirSync(join(root, 'bench/results'), { recursive: true });
  writeFileSync(join(root, 'bench/results/multiturn.json'), JSON.stringify(result, null, 2) + '\n');
  console.log(JSON.stringify(result, null, 2));
} finally {
  await nats.stop();
}
