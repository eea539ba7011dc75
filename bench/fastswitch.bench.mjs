// FastSwitch against vLLM-style swap preemption on the same engine, in one run. Both run the
// node's real BatchScheduler with priority scheduling (NODE_SCHEDULING=priority) and swap
// preemption over the reference engine on the CPU backend (mnemo-small), on the same seeded
// multi-turn trace whose request priorities change at a given frequency (FastSwitch §4):
//   fastswitch  block groups (60 blocks), group-sized copies in one native batch, host copies
//               reused across preemptions (only new blocks are copied out), adaptive sync/async
//               swap-in (Algorithm 1);
//   baseline    no block groups, vLLM-style copies (one call per layer and K/V, one range per
//               block, all issued before one wait), every swap-out copies the whole KV, swap-in
//               always synchronous.
// Priority patterns: Markov (each live conversation's priority steps ±1 at an update) and Random
// (redrawn uniformly). Update frequency f: the chance per iteration that priorities update.
//
// The two systems run in lockstep: one iteration of one, then one of the other, the leader
// alternating per repetition, so a burst of load from other work on the machine falls on both
// alike (separate back-to-back runs on a shared machine differ by more than the effect measured).
// Each system keeps its own clock, the sum of its own iteration times: TTFT (request added →
// first token), TBT (gaps between a request's tokens) and throughput are on that clock, so one
// system's iterations never count against the other. An asynchronous swap-in still copying when
// FastSwitch's iteration ends is waited for inside that iteration (charged to FastSwitch), so its
// copy never runs for free during the baseline's turn.
// Writes bench/results/fastswitch.{json,svg}. Run: npm run bench -- fastswitch [--quick]
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { create } from '@bufbuild/protobuf';
import { ReferenceEngine } from '@mnemo/engine';
import { InferenceRequestSchema } from '@mnemo/proto';
import { JsonLogger, ServiceMetrics } from '@mnemo/service-kit';
import { BatchScheduler } from '../apps/node-manager/dist/batching/batch.scheduler.js';
import { Sequence } from '../apps/node-manager/dist/batching/sequence.js';
import { SequenceStore } from '../apps/node-manager/dist/batching/sequence.store.js';
import { SwapManager } from '../apps/node-manager/dist/batching/swap.manager.js';
import { NodeMetrics } from '../apps/node-manager/dist/shared/node.metrics.js';
import { percentile, rng, round } from './lib/figures.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const quick = process.argv.includes('--quick');
const MODEL = 'mnemo-small';
const CONVERSATIONS = quick ? 8 : 24;
const TURNS = 3;
const USER_TOKENS = 48;
const REPLY_TOKENS = quick ? 24 : 32;
const KV_BLOCKS = quick ? 48 : 64; // far below the live conversations' histories: most wait or sit swapped out
const MAX_BATCH = 8;
const LEVELS = 8;
const FREQS = quick ? [0.04] : [0.01, 0.04, 0.1];
const PATTERNS = quick ? ['markov'] : ['markov', 'random'];
const REPS = 2;


const SYSTEMS = {
  fastswitch: { blockGroups: 60, granularity: 'grouped', swapIn: 'adaptive' },
  baseline: { blockGroups: 0, granularity: 'per-block', swapIn: 'sync' },
};

/** One system on the trace, advanced one iteration per `step()`; `result()` once the trace is done. */
async function makeSystem(system, pattern, freq) {
  const sys = SYSTEMS[system];
  const engine = await ReferenceEngine.create({
    models: [MODEL],
    backend: 'cpu',
    kvBlocks: KV_BLOCKS,
    blockGroups: sys.blockGroups || undefined,
    swap: { granularity: sys.granularity, hostBytes: 1024 * 2 ** 20 },
  });
  const model = engine.models()[0];
  const store = new SequenceStore();
  const metrics = new ServiceMetrics('bench');
  const nodeMetrics = new NodeMetrics(metrics);
  const logger = new JsonLogger('bench', 'error', () => undefined);
  const clock = { monotonicMs: () => performance.now(), unixMs: () => Date.now() };
  const config = {
    NODE_ID: 'bench',
    NODE_MAX_BATCH: MAX_BATCH,
    NODE_MAX_PREFILL_TOKENS: 2048,
    NODE_PREFIX_CACHE: 'on',
    NODE_SCHEDULING: 'priority',
    NODE_PRIORITY_UPDATE_EVERY: 1,
    NODE_FAIRNESS_AGING_ITERATIONS: 0,
    NODE_FAIRNESS_TOKENS_PER_LEVEL: 0,
    NODE_PREEMPTION: 'swap',
    NODE_SWAP_IN: sys.swapIn,
  };
  // The system's own clock: the time its iterations took so far (plus the current one's).
  let busyMs = 0;
  let iterStart;
  const ownNow = () => busyMs + (iterStart === undefined ? 0 : performance.now() - iterStart);
  const times = new Map(); // requestId → { added, tokens: [own-clock ms] }
  const done = new Set();
  const sink = {
    emit(seq, ev) {
      const t = times.get(ev.requestId);
      if (ev.tokens?.length) t.tokens.push(ownNow());
      if (ev.done) done.add(ev.requestId);
    },
  };
  const swaps = new SwapManager(engine, config, store, clock, nodeMetrics, logger);
  const sut = new BatchScheduler(store, engine, sink, config, clock, nodeMetrics, metrics, logger, undefined, swaps);
  // Swap-ins in flight (asynchronous ones outlive the call that issued them).
  const copying = new Set();
  const swapIn = engine.swap.swapIn.bind(engine.swap);
  engine.swap.swapIn = (ids) => {
    const p = swapIn(ids);
    copying.add(p);
    p.then(() => copying.delete(p), () => copying.delete(p));
    return p;
  };

  // Seeded trace, identical for both systems: conversation c starts at iteration 3c; each next
  // turn starts 2 iterations after the previous reply ended and carries the whole history.
  const r = rng(1234 + Math.round(freq * 1000) + (pattern === 'random' ? 7 : 0));
  const convs = Array.from({ length: CONVERSATIONS }, (_, c) => ({
    c,
    turn: 0,
    history: [],
    priority: Math.floor(r() * LEVELS),
    startAt: 3 * c,
    live: undefined,
  }));
  const userTurn = (c, t) => Array.from({ length: USER_TOKENS }, (_, i) => (c * 131 + t * 17 + i * 7 + 3) % 250);
  let iteration = 0;
  let generated = 0;
  /** One iteration of the trace; false once every conversation has had all its turns. */
  async function step() {
    if (!convs.some((cv) => cv.turn < TURNS)) return false;
    for (const cv of convs) {
      if (cv.live && done.has(cv.live.requestId)) {
        const toks = [];
        cv.history.push(...cv.live.tokens, ...toks);
        generated += times.get(cv.live.requestId).tokens.length;
        cv.turn++;
        cv.live = undefined;
        cv.startAt = iteration + 2;
      }
      if (!cv.live && cv.turn < TURNS && iteration >= cv.startAt) {
        const tokens = [...cv.history, ...userTurn(cv.c, cv.turn)];
        const requestId = `c${cv.c}t${cv.turn}`;
        const request = create(InferenceRequestSchema, {
          requestId,
          model: MODEL,
          tokens,
          tenant: `user${cv.c}`,
          replySubject: `_INBOX.${requestId}`,
          priority: cv.priority,
          sampling: { temperature: 0, topP: 1, maxTokens: REPLY_TOKENS, seed: 1n, stopTokenIds: [] },
        });
        // EOS would end replies at different lengths per system only if KV differed; it cannot.
        times.set(requestId, { added: ownNow(), tokens: [] });
        store.add(new Sequence(request, model, store.arrivalSeq(), clock.monotonicMs()));
        cv.live = request;
        cv.history = tokens;
      }
    }
    if (r() < freq) {
      for (const cv of convs) {
        cv.priority = pattern === 'markov' ? Math.max(0, Math.min(LEVELS - 1, cv.priority + (r() < 0.5 ? -1 : 1))) : Math.floor(r() * LEVELS);
        if (cv.live) cv.live.priority = cv.priority;
      }
    }
    iterStart = performance.now();
    await sut.runIteration();
    // Copies still running belong to this system's time, not to the other's turn.
    if (copying.size > 0) await Promise.allSettled([...copying]);
    busyMs += performance.now() - iterStart;
    iterStart = undefined;
    iteration++;
    if (iteration > 200_000) throw new Error('trace did not finish');
    return true;
  }

  async function result() {
    const ttft = [];
    const tbt = [];
    for (const t of times.values()) {
      if (t.tokens.length > 0) ttft.push(t.tokens[0] - t.added);
      for (let i = 1; i < t.tokens.length; i++) tbt.push(t.tokens[i] - t.tokens[i - 1]);
    }
    const st = engine.swap.stats;
    const wait = (await nodeMetrics.swapWait.get()).values.reduce((n, v) => n + v.value, 0);
    const asyncIns = (await nodeMetrics.swaps.get()).values.filter((v) => v.labels.direction === 'in' && v.labels.mode === 'async').reduce((n, v) => n + v.value, 0);
    await engine.close();
    return { ttft, tbt, generated, busyMs, iterations: iteration, requests: times.size, asyncIns, waitMs: wait * 1000, ...st };
  }
  return { step, result };
}

/** Both systems on one trace, one iteration each in turn, `leader` first. */
async function lockstep(pattern, freq, leader) {
  const order = leader === 'fastswitch' ? ['fastswitch', 'baseline'] : ['baseline', 'fastswitch'];
  const sys = {};
  for (const name of order) sys[name] = await makeSystem(name, pattern, freq);
  for (let live = true; live; ) {
    live = false;
    for (const name of order) live = (await sys[name].step()) || live;
  }
  return { fastswitch: await sys.fastswitch.result(), baseline: await sys.baseline.result() };
}

/** Pools the samples and sums the counters of several runs of one system. */
function summarize(runs) {
  const ttft = runs.flatMap((x) => x.ttft);
  const tbt = runs.flatMap((x) => x.tbt);
  const sum = (k) => runs.reduce((n, x) => n + x[k], 0);
  const copies = sum('copies');
  return {
    runs: runs.length,
    iterations: sum('iterations'),
    requests: sum('requests'),
    p95_ttft_ms: round(percentile(ttft, 95)),
    p99_ttft_ms: round(percentile(ttft, 99)),
    p999_ttft_ms: round(percentile(ttft, 99.9)),
    p99_tbt_ms: round(percentile(tbt, 99)),
    p999_tbt_ms: round(percentile(tbt, 99.9)),
    throughput_tok_s: round((sum('generated') / sum('busyMs')) * 1000, 1),
    swap_outs: sum('swapOuts'),
    swap_ins: sum('swapIns'),
    async_swap_ins: sum('asyncIns'),
    swap_out_bytes: sum('bytesOut'),
    swap_in_bytes: sum('bytesIn'),
    copies,
    mean_transfer_bytes: copies === 0 ? 0 : round((sum('bytesOut') + sum('bytesIn')) / copies, 0),
    reused_blocks: sum('reusedBlocks'),
    swap_wait_ms: round(sum('waitMs'), 1),
    // Loop time stalled per swapped sequence (out and in): the cost of one context switch as the batch sees it.
    stall_per_switch_ms: sum('swapOuts') === 0 ? 0 : round(sum('waitMs') / sum('swapOuts'), 3),
    // The system's own time (sum of its iterations), the clock every figure here is on.
    busy_ms: round(sum('busyMs'), 0),
  };
}

// JIT and weights warm-up, discarded: whichever system ran first would otherwise pay for it.
await lockstep('markov', 0.04, 'fastswitch');
const loadBefore = loadavg()[0];
const started = performance.now();

const rows = [];
for (const pattern of PATTERNS) {
  for (const freq of FREQS) {
    const raw = { fastswitch: [], baseline: [] };
    // Alternate which system leads each lockstep pair.
    for (let rep = 0; rep < REPS; rep++) {
      const pair = await lockstep(pattern, freq, rep % 2 === 0 ? 'fastswitch' : 'baseline');
      for (const system of ['fastswitch', 'baseline']) raw[system].push(pair[system]);
    }
    const pair = { fastswitch: summarize(raw.fastswitch), baseline: summarize(raw.baseline) };
    for (const system of ['fastswitch', 'baseline']) console.log(pattern, freq, system, JSON.stringify(pair[system]));
    const ratio = (k) => (pair.fastswitch[k] === 0 ? null : round(pair.baseline[k] / pair.fastswitch[k], 2));
    rows.push({
      pattern,
      freq,
      ...pair,
      p99_ttft_baseline_over_fastswitch: ratio('p99_ttft_ms'),
      p999_tbt_baseline_over_fastswitch: ratio('p999_tbt_ms'),
      swap_out_volume_reduction: pair.baseline.swap_out_bytes === 0 ? null : round(1 - pair.fastswitch.swap_out_bytes / pair.baseline.swap_out_bytes, 3),
      mean_transfer_bytes_ratio: pair.baseline.mean_transfer_bytes === 0 ? null : round(pair.fastswitch.mean_transfer_bytes / pair.baseline.mean_transfer_bytes, 1),
      throughput_fastswitch_over_baseline: pair.baseline.throughput_tok_s === 0 ? null : round(pair.fastswitch.throughput_tok_s / pair.baseline.throughput_tok_s, 3),
      swap_wait_baseline_over_fastswitch: ratio('swap_wait_ms'),
      context_switch_stall_ratio: ratio('stall_per_switch_ms'),
    });
    const last = rows.at(-1);
    console.log(
      `${pattern} f=${freq}: P99 TTFT ×${last.p99_ttft_baseline_over_fastswitch}, P99.9 TBT ×${last.p999_tbt_baseline_over_fastswitch}, ` +
        `swap-out volume −${round(100 * (last.swap_out_volume_reduction ?? 0), 1)}%, bytes per transfer ×${last.mean_transfer_bytes_ratio}, swap wait ×${last.swap_wait_baseline_over_fastswitch}`,
    );
  }
}

const headline = rows.find((x) => x.pattern === 'markov' && x.freq === 0.04);
const result = {
  bench: 'fastswitch',
  engine: `reference engine, CPU backend, ${MODEL}`,
  quick,
  machine: { cpus: cpus().length, load1_start: round(loadBefore, 2), load1_end: round(loadavg()[0], 2), minutes: round((performance.now() - started) / 60000, 1) },
  method: 'lockstep: the two systems alternate iterations; figures on each system\'s own clock (sum of its iteration times)',
  trace: { conversations: CONVERSATIONS, turns: TURNS, user_tokens: USER_TOKENS, reply_tokens: REPLY_TOKENS, kv_blocks: KV_BLOCKS, max_batch: MAX_BATCH, priority_levels: LEVELS },
  p99_ttft_baseline_over_fastswitch: headline.p99_ttft_baseline_over_fastswitch,
  p999_tbt_baseline_over_fastswitch: headline.p999_tbt_baseline_over_fastswitch,
  swap_out_volume_reduction: headline.swap_out_volume_reduction,
  mean_transfer_bytes_ratio: headline.mean_transfer_bytes_ratio,
  throughput_fastswitch_over_baseline: headline.throughput_fastswitch_over_baseline,
  swap_wait_baseline_over_fastswitch: headline.swap_wait_baseline_over_fastswitch,
  context_switch_stall_ratio: headline.context_switch_stall_ratio,
  headline: { pattern: 'markov', freq: 0.04, fastswitch: headline.fastswitch, baseline: headline.baseline },
  rows,
};

function svg(res) {
  const W = 640, H = 300, pad = 50;
  const metrics = [['p99_ttft_baseline_over_fastswitch', 'P99 TTFT ratio'], ['p999_tbt_baseline_over_fastswitch', 'P99.9 TBT ratio'], ['swap_out_volume_reduction', 'swap-out volume cut']];
  const max = Math.max(2.5, ...res.rows.flatMap((x) => metrics.map(([k]) => x[k] ?? 0)));
  const bw = (W - 2 * pad) / (res.rows.length * (metrics.length + 1));
  const colors = ['#3b6ea8', '#d08a2e', '#4f9a5b'];
  const parts = [`<text x="${pad}" y="20" font-size="13">FastSwitch vs vLLM-style swap (baseline ÷ FastSwitch; volume cut as a fraction) — ${res.engine}</text>`];
  res.rows.forEach((row, i) => {
    metrics.forEach(([k], j) => {
      const v = row[k] ?? 0;
      const h = ((H - 2 * pad) * v) / max;
      const x = pad + (i * (metrics.length + 1) + j) * bw;
      parts.push(`<rect x="${x}" y="${H - pad - h}" width="${bw - 2}" height="${h}" fill="${colors[j]}"/>`);
    });
    parts.push(`<text x="${pad + i * (metrics.length + 1) * bw}" y="${H - pad + 14}" font-size="9">${row.pattern} ${row.freq}</text>`);
  });
  const y1 = H - pad - (H - 2 * pad) / max;
  parts.push(`<line x1="${pad}" x2="${W - pad}" y1="${y1}" y2="${y1}" stroke="#999" stroke-dasharray="4 3"/><text x="${W - pad + 2}" y="${y1 + 3}" font-size="9">1×</text>`);
  metrics.forEach(([, label], j) => parts.push(`<rect x="${pad + j * 170}" y="${H - 18}" width="10" height="10" fill="${colors[j]}"/><text x="${pad + j * 170 + 14}" y="${H - 9}" font-size="10">${label}</text>`));
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif">\n<rect width="100%" height="100%" fill="white"/>\n${parts.join('\n')}\n</svg>\n`;
}

mkdirSync(join(root, 'bench/results'), { recursive: true });
writeFileSync(join(root, 'bench/results/fastswitch.json'), JSON.stringify(result, null, 2) + '\n');
writeFileSync(join(root, 'bench/results/fastswitch.svg'), svg(result));
console.log('wrote bench/results/fastswitch.json and fastswitch.svg');
