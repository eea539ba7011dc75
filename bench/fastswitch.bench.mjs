// FastSwitch against vLLM-style swap preemption on the same engine, in one run. Both run the
// node's real BatchScheduler with priority scheduling (NODE_SCHEDULING=priority) and swap
// preemption over the reference engine on the CPU backend (mnemo-small), on the same seeded
// multi-turn trace whose request priorities change at a given frequency (FastSwitch §4):
//   fastswitch        block groups (60 blocks), group-sized copies in one native batch, host
//                     copies reused across preemptions (only new blocks are copied out), adaptive
//                     sync/async swap-in (Algorithm 1; on the CPU backend copies cannot overlap
//                     compute, so the policy picks sync);
//   fastswitch-async  the same with every swap-in that can overlap others' decode sent
//                     asynchronously (NODE_SWAP_IN=async): Algorithm 1's overlapped path, run and
//                     counted here; a labelled extra, in the headline row only;
//   baseline          no block groups, vLLM-style copies (one call per layer and K/V, one range
//                     per block, all issued before one wait), every swap-out copies the whole KV,
//                     swap-in always synchronous.
// Priority patterns: Markov (each live conversation's priority steps ±1 at an update) and Random
// (redrawn uniformly). Update frequency f: the chance per iteration that priorities update.
//
// Arrivals are in time, as the paper's Poisson traces (§4): conversations start as a Poisson
// process and each next turn arrives an exponential think time after its reply, on the clock of
// the system serving it (libs/testkit/src/conversation.trace.ts). The rate is set against capacity: a
// discarded warm-up runs the trace closed-loop (every turn at once) and measures the baseline's
// requests per second of its own time; the trace then offers --load (default 1: the high-load regime of the paper) of that.
//
// The systems run in lockstep: one iteration of one, then one of the other, the leader alternating
// per repetition, so a burst of load from other work on the machine falls on both alike (separate
// back-to-back runs on a shared machine differ by more than the effect measured). Each system
// keeps its own clock, the sum of its own iteration times plus the idle gaps it skips while no
// request is due: TTFT (arrival → first token), TBT (gaps between a request's tokens) and
// throughput (over busy time) are on that clock, so one system's iterations never count against
// the other. An asynchronous swap-in still copying when an iteration ends is waited for inside
// that iteration (charged to its system), so its copy never runs for free during another's turn.
// Writes bench/results/fastswitch.json (figure: bench/figures/fastswitch.figure.mjs). Run: npm run bench -- fastswitch [--quick] [--load 1]
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { create } from '@bufbuild/protobuf';
import { ReferenceEngine } from '@mnemo/engine';
import { InferenceRequestSchema } from '@mnemo/proto';
import { JsonLogger, ServiceMetrics } from '@mnemo/service-kit';
import { BatchScheduler } from '../apps/node-manager/dist/batching/batch.scheduler.js';
import { Sequence } from '../apps/node-manager/dist/shared/sequence.js';
import { SequenceStore } from '../apps/node-manager/dist/batching/sequence.store.js';
import { SwapManager } from '../apps/node-manager/dist/batching/swap.manager.js';
import { NodeMetrics } from '../apps/node-manager/dist/shared/node.metrics.js';
import { arg, ConversationTrace, percentile, rng, round } from '@mnemo/testkit';
import { quick, root } from './lib/bench.args.mjs';

const MODEL = 'mnemo-small';
const CONVERSATIONS = quick ? 12 : 32;
const TURNS = 5; // ShareGPT's multi-round conversations average 5.5 turns (FastSwitch §4)
const USER_TOKENS = 48;
const REPLY_TOKENS = quick ? 24 : 32;
const KV_BLOCKS = quick ? 48 : 64; // far below the live conversations' histories: most wait or sit swapped out
const MAX_BATCH = 8;
const LEVELS = 8;
const FREQS = quick ? [0.04] : [0.01, 0.04, 0.1];
const PATTERNS = quick ? ['markov'] : ['markov', 'random'];
const REPS = 2;
/** Offered load, as a share of the baseline's closed-loop capacity measured in the warm-up. */
const LOAD = Number(arg('load', '1'));
if (!(LOAD > 0 && LOAD <= 2)) throw new RangeError(`--load must be in (0, 2], got ${LOAD}`);
/** A user's think time against the gap between conversation starts (both exponential). */
const THINK_OVER_GAP = 1;

const SYSTEMS = {
  fastswitch: { blockGroups: 60, granularity: 'grouped', swapIn: 'adaptive' },
  'fastswitch-async': { blockGroups: 60, granularity: 'grouped', swapIn: 'async' },
  baseline: { blockGroups: 0, granularity: 'per-block', swapIn: 'sync' },
};
const HEADLINE = { pattern: 'markov', freq: 0.04 };

/** One system on the trace, advanced one iteration per `step()`; `result()` once the trace is done. */
async function makeSystem(system, pattern, freq, timing) {
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
  // The system's own clock: the time its iterations took so far (plus the current one's), plus
  // the idle gaps it skipped while no request was due.
  let busyMs = 0;
  let idleMs = 0;
  let iterStart;
  const ownNow = () => busyMs + idleMs + (iterStart === undefined ? 0 : performance.now() - iterStart);
  // Seeded trace, identical for every system: the same conversations, start gaps and think times.
  const trace = new ConversationTrace({
    conversations: CONVERSATIONS,
    turns: TURNS,
    userTokens: USER_TOKENS,
    meanStartGapMs: timing.meanStartGapMs,
    meanThinkMs: timing.meanStartGapMs * THINK_OVER_GAP,
    seed: 1234 + Math.round(freq * 1000) + (pattern === 'random' ? 7 : 0),
  });
  const times = new Map(); // requestId → { added (arrival, own clock), tokens: [own-clock ms], reply: [token ids] }
  const requests = new Map(); // live requestId → InferenceRequest (its priority is what the ranker reads)
  let generated = 0;
  const sink = {
    emit(seq, ev) {
      const t = times.get(ev.requestId);
      if (ev.tokens?.length) {
        t.tokens.push(ownNow());
        t.reply.push(...ev.tokens);
      }
      if (ev.done) {
        generated += t.tokens.length;
        requests.delete(ev.requestId);
        trace.replyDone(ev.requestId, t.reply, ownNow());
      }
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
    p.then(
      () => copying.delete(p),
      () => copying.delete(p),
    );
    return p;
  };

  // Priority updates are drawn per iteration from their own seeded stream.
  const pr = rng(4321 + Math.round(freq * 1000) + (pattern === 'random' ? 7 : 0));
  const priority = Array.from({ length: CONVERSATIONS }, () => Math.floor(pr() * LEVELS));
  let iteration = 0;
  /** One iteration; false once every conversation has had all its turns. */
  async function step() {
    if (trace.finished()) return false;
    for (const d of trace.due(ownNow())) {
      const request = create(InferenceRequestSchema, {
        requestId: d.requestId,
        model: MODEL,
        tokens: d.tokens,
        tenant: `user${d.conversation}`,
        replySubject: `_INBOX.${d.requestId}`,
        priority: priority[d.conversation],
        sampling: { temperature: 0, topP: 1, maxTokens: REPLY_TOKENS, seed: 1n, stopTokenIds: [] },
      });
      // TTFT counts from the turn's arrival, not from the iteration boundary that admits it.
      times.set(d.requestId, { added: d.arrivedAtMs, tokens: [], reply: [] });
      requests.set(d.requestId, { request, conversation: d.conversation });
      store.add(new Sequence(request, model, store.arrivalSeq(), clock.monotonicMs()));
    }
    if (pr() < freq) {
      for (let c = 0; c < CONVERSATIONS; c++)
        priority[c] =
          pattern === 'markov' ? Math.max(0, Math.min(LEVELS - 1, priority[c] + (pr() < 0.5 ? -1 : 1))) : Math.floor(pr() * LEVELS);
      for (const { request, conversation } of requests.values()) request.priority = priority[conversation];
    }
    iterStart = performance.now();
    const worked = await sut.runIteration();
    // Copies still running belong to this system's time, not to another's turn.
    if (copying.size > 0) await Promise.allSettled([...copying]);
    busyMs += performance.now() - iterStart;
    iterStart = undefined;
    if (worked) iteration++;
    else if (!trace.finished()) {
      const next = trace.nextArrivalMs();
      if (next === Infinity) throw new Error(`idle with turns in flight: ${JSON.stringify(trace.live())}`);
      idleMs += Math.max(0, next - ownNow());
    }
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
    const asyncIns = (await nodeMetrics.swaps.get()).values
      .filter((v) => v.labels.direction === 'in' && v.labels.mode === 'async')
      .reduce((n, v) => n + v.value, 0);
    await engine.close();
    return { ttft, tbt, generated, busyMs, idleMs, iterations: iteration, requests: times.size, asyncIns, waitMs: wait * 1000, ...st };
  }
  return { step, result };
}

/** The systems on one trace, one iteration each in turn, `leader` first. */
async function lockstep(pattern, freq, leader, timing, names = ['fastswitch', 'baseline']) {
  const order = [leader, ...names.filter((n) => n !== leader)];
  const sys = {};
  for (const name of order) sys[name] = await makeSystem(name, pattern, freq, timing);
  for (let live = true; live;) {
    live = false;
    for (const name of order) live = (await sys[name].step()) || live;
  }
  return Object.fromEntries(await Promise.all(names.map(async (n) => [n, await sys[n].result()])));
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
    // The system's own time (sum of its iterations; idle gaps apart), the clock every figure here is on.
    busy_ms: round(sum('busyMs'), 0),
    idle_ms: round(sum('idleMs'), 0),
    // Share of its own clock the system was busy: how close the offered load came to its capacity.
    utilization: round(sum('busyMs') / (sum('busyMs') + sum('idleMs')), 3),
  };
}

// Warm-up, discarded (whichever system ran first would otherwise pay for JIT and weights), then
// a closed-loop run (every turn as soon as it can be) that measures the capacity the arrival
// rate is set against: the baseline's requests per second of its own busy time.
await lockstep(HEADLINE.pattern, HEADLINE.freq, 'fastswitch', { meanStartGapMs: 0 });
const warm = await lockstep(HEADLINE.pattern, HEADLINE.freq, 'baseline', { meanStartGapMs: 0 });
const capacityPerMs = warm.baseline.requests / warm.baseline.busyMs;
const timing = { meanStartGapMs: TURNS / (LOAD * capacityPerMs) };
console.log(
  `capacity ${round(capacityPerMs * 1000, 1)} req/s (baseline, closed loop); offered ${LOAD} of it: a conversation every ${round(timing.meanStartGapMs, 1)} ms on average`,
);
const loadBefore = loadavg()[0];
const started = performance.now();

const rows = [];
for (const pattern of PATTERNS) {
  for (const freq of FREQS) {
    const names =
      pattern === HEADLINE.pattern && freq === HEADLINE.freq ? ['fastswitch', 'fastswitch-async', 'baseline'] : ['fastswitch', 'baseline'];
    const raw = Object.fromEntries(names.map((n) => [n, []]));
    // Alternate which system leads each lockstep run.
    for (let rep = 0; rep < REPS; rep++) {
      const run = await lockstep(pattern, freq, rep % 2 === 0 ? 'fastswitch' : 'baseline', timing, names);
      for (const system of names) raw[system].push(run[system]);
    }
    const pair = Object.fromEntries(names.map((n) => [n, summarize(raw[n])]));
    for (const system of names) console.log(pattern, freq, system, JSON.stringify(pair[system]));
    const ratio = (k) => (pair.fastswitch[k] === 0 ? null : round(pair.baseline[k] / pair.fastswitch[k], 2));
    rows.push({
      pattern,
      freq,
      ...pair,
      p99_ttft_baseline_over_fastswitch: ratio('p99_ttft_ms'),
      p999_tbt_baseline_over_fastswitch: ratio('p999_tbt_ms'),
      swap_out_volume_reduction:
        pair.baseline.swap_out_bytes === 0 ? null : round(1 - pair.fastswitch.swap_out_bytes / pair.baseline.swap_out_bytes, 3),
      mean_transfer_bytes_ratio:
        pair.baseline.mean_transfer_bytes === 0 ? null : round(pair.fastswitch.mean_transfer_bytes / pair.baseline.mean_transfer_bytes, 1),
      throughput_fastswitch_over_baseline:
        pair.baseline.throughput_tok_s === 0 ? null : round(pair.fastswitch.throughput_tok_s / pair.baseline.throughput_tok_s, 3),
      swap_wait_baseline_over_fastswitch: ratio('swap_wait_ms'),
      context_switch_stall_ratio: ratio('stall_per_switch_ms'),
      ...(pair['fastswitch-async']
        ? {
            p99_ttft_baseline_over_fastswitch_async: pair['fastswitch-async'].p99_ttft_ms
              ? round(pair.baseline.p99_ttft_ms / pair['fastswitch-async'].p99_ttft_ms, 2)
              : null,
            throughput_fastswitch_async_over_baseline: pair.baseline.throughput_tok_s
              ? round(pair['fastswitch-async'].throughput_tok_s / pair.baseline.throughput_tok_s, 3)
              : null,
          }
        : {}),
    });
    const last = rows.at(-1);
    console.log(
      `${pattern} f=${freq}: P99 TTFT ×${last.p99_ttft_baseline_over_fastswitch}, P99.9 TBT ×${last.p999_tbt_baseline_over_fastswitch}, ` +
        `swap-out volume −${round(100 * (last.swap_out_volume_reduction ?? 0), 1)}%, bytes per transfer ×${last.mean_transfer_bytes_ratio}, swap wait ×${last.swap_wait_baseline_over_fastswitch}` +
        (pair['fastswitch-async']
          ? `; forced async: ${pair['fastswitch-async'].async_swap_ins} async swap-ins, P99 TTFT ×${last.p99_ttft_baseline_over_fastswitch_async}`
          : ''),
    );
  }
}

const headline = rows.find((x) => x.pattern === HEADLINE.pattern && x.freq === HEADLINE.freq);
const result = {
  bench: 'fastswitch',
  engine: `reference engine, CPU backend, ${MODEL}`,
  quick,
  machine: {
    cpus: cpus().length,
    load1_start: round(loadBefore, 2),
    load1_end: round(loadavg()[0], 2),
    minutes: round((performance.now() - started) / 60000, 1),
  },
  method:
    "lockstep: the systems alternate iterations; figures on each system's own clock (its iteration times plus the idle gaps it skips)",
  trace: {
    conversations: CONVERSATIONS,
    turns: TURNS,
    user_tokens: USER_TOKENS,
    reply_tokens: REPLY_TOKENS,
    kv_blocks: KV_BLOCKS,
    max_batch: MAX_BATCH,
    priority_levels: LEVELS,
    arrivals: 'conversations start as a Poisson process; a next turn arrives an exponential think time after its reply',
    capacity_req_per_s: round(capacityPerMs * 1000, 2),
    offered_load_of_capacity: LOAD,
    mean_start_gap_ms: round(timing.meanStartGapMs, 2),
    mean_think_ms: round(timing.meanStartGapMs * THINK_OVER_GAP, 2),
  },
  p99_ttft_baseline_over_fastswitch: headline.p99_ttft_baseline_over_fastswitch,
  p999_tbt_baseline_over_fastswitch: headline.p999_tbt_baseline_over_fastswitch,
  swap_out_volume_reduction: headline.swap_out_volume_reduction,
  mean_transfer_bytes_ratio: headline.mean_transfer_bytes_ratio,
  throughput_fastswitch_over_baseline: headline.throughput_fastswitch_over_baseline,
  swap_wait_baseline_over_fastswitch: headline.swap_wait_baseline_over_fastswitch,
  context_switch_stall_ratio: headline.context_switch_stall_ratio,
  // Asynchronous swap-ins run in the headline row (FastSwitch's adaptive policy keeps them sync on the CPU backend).
  async_swap_ins: rows.reduce((n, x) => n + Object.keys(SYSTEMS).reduce((m, k) => m + (x[k]?.async_swap_ins ?? 0), 0), 0),
  forced_async: {
    label: 'extra: NODE_SWAP_IN=async on the CPU backend',
    async_swap_ins: headline['fastswitch-async'].async_swap_ins,
    p99_ttft_baseline_over_fastswitch_async: headline.p99_ttft_baseline_over_fastswitch_async,
    throughput_fastswitch_async_over_baseline: headline.throughput_fastswitch_async_over_baseline,
  },
  headline: { ...HEADLINE, fastswitch: headline.fastswitch, 'fastswitch-async': headline['fastswitch-async'], baseline: headline.baseline },
  rows,
};

mkdirSync(join(root, 'bench/results'), { recursive: true });
writeFileSync(join(root, 'bench/results/fastswitch.json'), JSON.stringify(result, null, 2) + '\n');
console.log('wrote bench/results/fastswitch.json (npm run bench renders its figure)');
