// `npm run bench -- chaos [--duration-s 240] [--users 4] [--seed 1] [--max-requests 2000]
// [--engine reference|sim] [--warmup-s 60]`: issues 29 and 39's chaos run on loopback. A private
// NATS and cluster (bench/lib/chaos.cluster.mjs; the reference engine with the trained default
// model unless told otherwise) serve a seeded mixed workload (multi-turn chat sessions, streams,
// greedy and seeded sampling, advisories) for a fixed time while, after the warm-up,
// node-managers are SIGKILLed and started again at seeded points (three in the run, well inside
// the supervisor's five a minute), NATS is restarted once, the SSD extents a node's journal names
// for chunks of sessions with a later turn scheduled are corrupted, and the node holding waiting
// sessions is SIGSTOPped while advisories make other nodes pull from it (bench/lib/chaos.ledger.mjs).
// Each fault writes a ledger entry that is matched against the nodes' counters and `why`. At the
// end every completed request is run again on a clean cluster and the tokens compared. Writes
// bench/results/chaos.json.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { bucketUpperBound, counter, percentile, rng, round, samplesOf, scrapeMetrics } from '@mnemo/testkit';
import { CHAOS_CLUSTER, ChaosCluster } from './lib/chaos.cluster.mjs';
import { runUsers, streamChat, timeToServe } from './lib/chaos.workload.mjs';
import { CorruptWatch, corruptDetections, corruptScheduled, pauseHolder, why } from './lib/chaos.ledger.mjs';

const { values: opt } = parseArgs({
  options: {
    'duration-s': { type: 'string', default: '240' },
    users: { type: 'string', default: '4' },
    seed: { type: 'string', default: '1' },
    'max-requests': { type: 'string', default: '2000' },
    engine: { type: 'string', default: 'reference' },
    'warmup-s': { type: 'string', default: '60' },
  },
});
const ENGINE = opt.engine;
const DURATION_MS = Number(opt['duration-s']) * 1000;
const WARMUP_MS = Number(opt['warmup-s']) * 1000;
const USERS = Number(opt.users);
const SEED = Number(opt.seed);
const DEADLINE_MS = CHAOS_CLUSTER.gatewayRequestTimeoutMs + 15_000;
if (!(DURATION_MS >= WARMUP_MS + 60_000)) throw new Error('--duration-s must leave at least 60 s after the warm-up');
const log = (m) => console.log(`[chaos +${((Date.now() - t0) / 1000).toFixed(1)} s] ${m}`);
const sleepUntil = async (at) => {
  while (Date.now() < at) await new Promise((r) => setTimeout(r, Math.min(500, at - Date.now())));
};

const dataDir = mkdtempSync(join(tmpdir(), 'mnemo-chaos-'));
const cluster = await ChaosCluster.start(join(dataDir, 'chaos'), ENGINE);
// The run, its warm-up and the fault schedule count from when the cluster is up.
const t0 = Date.now();
const base = cluster.gateway.base;
const records = [];
const advisories = [];
const events = [];
const ledger = [];
const waiting = new Map(); // session → its last completed turn, while a later one is scheduled
const counters = new Map(); // node id#incarnation → last counters seen
const watch = await CorruptWatch.open(cluster);
const sampler = setInterval(() => void sampleAll(), 5000);

/** RSS of every process, and the fault counters of every live node incarnation. */
async function sampleAll() {
  await Promise.all([cluster.sample(), watch.poll(ledger)]);
  await Promise.all(
    cluster.nodes.map(async (n) => {
      try {
        const families = await scrapeMetrics(n.port, 3000);
        const sum = (name) => counter(families, name);
        counters.set(`${n.id}#${n.incarnation}`, {
          crc: sum('mnemo_kv_crc_failures_total'),
          fallbacks: sum('mnemo_node_restore_fallbacks_total'),
          deadlines: sum('mnemo_kv_peer_fetch_deadlines_total'),
          replayed: sum('mnemo_kv_journal_replayed_segments_total'),
        });
      } catch {
        // stopped, restarting or busy: the last sample stands
      }
    }),
  );
}

/**
 * What the gateway counted of failovers (mnemo_gateway_failovers_total by outcome) and the p99 of
 * its failover gap histogram (the upper bound of the bucket holding it), when it has them.
 */
async function failoverFigures(port) {
  try {
    const families = await scrapeMetrics(port, 5000);
    const byOutcome = {};
    for (const m of samplesOf(families, 'mnemo_gateway_failovers_total')) byOutcome[m.labels.outcome ?? 'all'] = m.value;
    const p99 = bucketUpperBound(samplesOf(families, 'mnemo_gateway_failover_gap_seconds')[0], 0.99);
    return { by_outcome: byOutcome, gap_p99_ms_le: p99 === undefined || p99 === Infinity ? null : Math.round(p99 * 1000) };
  } catch {
    return { by_outcome: {}, gap_p99_ms_le: null };
  }
}

// The faults, at seeded points after the warm-up (fractions of the run, a little jitter).
const r = rng(SEED);
const at = (f) => t0 + Math.round(DURATION_MS * (f + (r() - 0.5) * 0.04));
const pick = () => cluster.nodes[Math.floor(r() * cluster.nodes.length)];
const chaos = (async () => {
  const plan = [
    { atMs: at(0.3), kind: 'kill', node: pick() },
    { atMs: at(0.38), kind: 'corrupt', node: pick() },
    { atMs: at(0.5), kind: 'nats' },
    { atMs: at(0.62), kind: 'sigstop', node: pick() },
    { atMs: at(0.72), kind: 'kill', node: pick() },
    { atMs: at(0.85), kind: 'kill', node: pick() },
  ].map((e) => ({ ...e, atMs: Math.max(e.atMs, t0 + WARMUP_MS) }));
  for (const e of plan) {
    await sleepUntil(e.atMs);
    const ev = { kind: e.kind, node: e.node?.id, startMs: Date.now() };
    events.push(ev);
    if (e.kind === 'kill') {
      await sampleAll();
      await cluster.killAndRestart(e.node, 2000);
      log(`killed ${e.node.id} (SIGKILL) and started it again (incarnation ${e.node.incarnation})`);
    } else if (e.kind === 'corrupt') {
      // Sessions whose last turn's chunks are on some node's SSD (the journal says where): tried for up to 30 s.
      let entries = [];
      for (const until = Date.now() + 30_000; entries.length === 0 && Date.now() < until; await sleepUntil(Date.now() + 2000))
        entries = await corruptScheduled(cluster, base, waiting, round((Date.now() - t0) / 1000, 1));
      for (const x of entries) ledger.push(Object.assign(x, { injectedMs: Date.now() }));
      ev.node = entries[0]?.target.node;
      const n = entries.reduce((a, x) => a + x.target.chunks.length, 0);
      log(`corrupted ${n} chunks (all their SSD extents) of ${entries.length} waiting sessions${n ? ` on ${ev.node}` : ''}`);
    } else if (e.kind === 'nats') {
      const killed = Date.now();
      const serving = timeToServe(base, killed);
      await cluster.nats.restart(3000);
      ev.recoveredS = await serving;
      log(`NATS restarted (down 3 s); serving again ${ev.recoveredS} s after the kill`);
    } else {
      const base_ = Number(CHAOS_CLUSTER.env.NODE_PEER_DEADLINE_BASE_MS);
      const ms = 4 * base_ + 2000;
      const entry = await pauseHolder(cluster, base, waiting, round((ev.startMs - t0) / 1000, 1), ms, base_);
      ledger.push(entry);
      ev.node = entry.node;
      log(
        `${entry.node} SIGSTOPped for ${ms} ms; ${entry.pulls_in_flight_past_deadline} pulls from it in flight past their deadline, ${entry.peer_deadlines_during_pause} peer deadlines`,
      );
    }
    ev.endMs = Date.now();
  }
})();

log(`cluster up (${CHAOS_CLUSTER.nodes} nodes); ${USERS} users for ${DURATION_MS / 1000} s`);
await runUsers({
  base,
  users: USERS,
  untilMs: t0 + DURATION_MS,
  maxRequests: Number(opt['max-requests']),
  seed: SEED,
  deadlineMs: DEADLINE_MS,
  records,
  advisories,
  waiting,
});
await chaos;
await sampleAll();
clearInterval(sampler);
const endMs = Date.now();
const gatewayFailovers = await failoverFigures(cluster.gateway.port);
// Before the cluster goes: which later requests found a targeted chunk corrupt, and where each failed request ran.
const detections = await corruptDetections(base, records, watch);
await watch.close();
const failedNodes = new Map();
for (const x of records.filter((x) => x.error?.code)) failedNodes.set(x, (await why(base, x.id))?.node_id ?? null);
await cluster.stop();
log(`${records.length} requests; re-running the completed ones on a clean cluster`);

// A clean cluster answers every completed request again: greedy and seeded sampling are both
// functions of the request alone, so the tokens must be the same.
const ok = (x) => x.status === 200 && !x.error && !x.lost && x.done && x.finish;
const completed = records.filter(ok);
const clean = await ChaosCluster.start(join(dataDir, 'clean'), ENGINE);
const again = new Array(completed.length);
let next = 0;
await Promise.all(
  Array.from({ length: 4 }, async () => {
    for (let i = next++; i < completed.length; i = next++) again[i] = await streamChat(clean.gateway.base, completed[i].body, DEADLINE_MS);
  }),
);
await clean.stop();
rmSync(dataDir, { recursive: true, force: true });

let mismatchedRequests = 0;
let mismatchedTokens = 0;
let duplicatedTokens = 0;
let compared = 0;
const verdict = new Map(); // record → 'same' | 'different' | 'not comparable'
completed.forEach((rec, i) => {
  const ref = again[i];
  if (!ok(ref)) return void verdict.set(rec, 'not comparable'); // the clean run failed (counted below)
  compared++;
  verdict.set(rec, ref.text === rec.text ? 'same' : 'different');
  if (ref.text === rec.text) return;
  mismatchedRequests++;
  let common = 0;
  while (common < ref.text.length && ref.text[common] === rec.text[common]) common++;
  mismatchedTokens += Math.max(ref.text.length, rec.text.length) - common;
  duplicatedTokens += Math.max(0, rec.text.length - ref.text.length);
});

// Streams in flight while a fault struck: the largest gap each saw between two pieces of text.
const disturbed = records.filter(
  (x) => events.some((e) => x.startedMs < (e.endMs ?? endMs) && x.endedMs > e.startMs) && x.arrivals.length > 1,
);
const maxGap = (x) => Math.max(...x.arrivals.slice(1).map((a, i) => a - x.arrivals[i]));
const gaps = disturbed.filter(ok).map(maxGap);

// RSS growth per process incarnation, from the end of its 60 s warm-up to its last sample, the KV host pool's used bytes excluded.
const rss = {};
const rssDetail = {};
let worstFrac = 0;
for (const inc of cluster.incarnations) {
  const warm = inc.samples.find((s) => s.atMs >= Math.max(inc.startedMs, t0) + WARMUP_MS);
  const last = inc.samples.at(-1);
  if (!warm || !last || last.atMs - warm.atMs < 30_000) continue;
  const before = warm.rss - warm.pool;
  const growth = last.rss - last.pool - before;
  rss[`${inc.service}#${inc.incarnation}`] = round(growth / 2 ** 20, 1);
  const mb = (x) => round(x / 2 ** 20, 1);
  rssDetail[`${inc.service}#${inc.incarnation}`] = {
    rss_warm_mb: mb(warm.rss),
    rss_end_mb: mb(last.rss),
    pool_warm_mb: mb(warm.pool),
    pool_end_mb: mb(last.pool),
    span_s: Math.round((last.atMs - warm.atMs) / 1000),
  };
  worstFrac = Math.max(worstFrac, growth / before);
}
const totals = [...counters.values()].reduce(
  (a, c) => ({
    crc: a.crc + c.crc,
    fallbacks: a.fallbacks + c.fallbacks,
    deadlines: a.deadlines + c.deadlines,
    replayed: a.replayed + c.replayed,
  }),
  { crc: 0, fallbacks: 0, deadlines: 0, replayed: 0 },
);
const failedClean = records.filter((x) => !ok(x) && !x.lost && x.error?.code);
const codes = {};
for (const x of failedClean) codes[x.error.code] = (codes[x.error.code] ?? 0) + 1;

// The ledger matched: each corruption read must be a CRC failure, each pull from a paused node a
// peer deadline, and each detection's request must have answered as the clean run did.
const read = new Set(detections.map((d) => `${d.node}/${d.key}`));
// A detection is answered correctly when every request that was reading the chunk then answered as the clean run did.
const answered = detections.filter((d) => d.readers.length > 0 && d.readers.every((x) => verdict.get(x) === 'same'));
for (const e of ledger) {
  if (e.fault === 'corrupt') {
    const seen = detections.filter((d) => d.node === e.target.node && e.target.chunks.some((c) => c.key === d.key));
    e.read_chunks = seen.length;
    e.detected = seen.map((d) => ({
      key: d.key,
      tier: d.tier,
      at_s: round((d.atUnixMs - t0) / 1000, 1),
      requests: d.readers.map((x) => ({ id: x.id, session: x.session, turn: x.turn, answer: verdict.get(x) ?? 'not completed' })),
    }));
    e.matched = e.read_chunks === 0 ? 'not read (no later request restored these chunks from this node)' : totals.crc >= read.size;
  } else if (e.fault === 'pause') {
    e.matched = e.pulls_in_flight_past_deadline === 0 ? 'no pull from the paused node was started' : e.peer_deadlines_during_pause >= 1;
  }
  delete e.injectedMs;
}
// Why a failed request had no recovery path, for the failures a fault explains (else null: unexplained).
const NO_RECOVERY = [
  [
    /the scheduler did not answer/,
    'nats',
    'its SCHEDULE exchange fell into the NATS outage and was lost with the server; the gateway waits for the answer until the request deadline, and does not re-send SCHEDULE, which could place the request twice',
  ],
  [
    /no token from the node/,
    'nats',
    "its node's token events were published while NATS was down and lost with it, the last one included, so no later event showed the gap the gateway continues from; the idle timeout (GATEWAY_IDLE_TIMEOUT_MS) is then the only signal",
  ],
];
const noRecovery = (x, faults) => NO_RECOVERY.find(([re, fault]) => re.test(x.error.message ?? '') && faults.includes(fault))?.[2] ?? null;
const overlapping = (x) => events.filter((e) => x.startedMs < (e.endMs ?? endMs) + 15_000 && x.endedMs > e.startMs).map((e) => e.kind);

const result = {
  what: `chaos run on loopback: a private NATS, scheduler, gateway and ${ENGINE} node-managers as processes; seeded chat sessions (streams, greedy and seeded sampling, advisories) while nodes are killed and restarted, NATS restarted, the SSD extents of chunks that waiting sessions will restore corrupted, and the node holding them paused while other nodes pull from it; every fault in a ledger matched against the nodes' counters; every completed request re-run on a clean cluster`,
  options: {
    engine: ENGINE,
    model: CHAOS_CLUSTER.model,
    duration_s: DURATION_MS / 1000,
    warmup_s: WARMUP_MS / 1000,
    users: USERS,
    seed: SEED,
    nodes: CHAOS_CLUSTER.nodes,
    max_requests: Number(opt['max-requests']),
  },
  requests: records.length,
  completed: completed.length,
  failed_clean: failedClean.length,
  failed_by_code: codes,
  lost: records.filter((x) => x.lost || (!ok(x) && !x.error?.code)).length,
  compared,
  not_comparable: completed.length - compared,
  mismatched_requests: mismatchedRequests,
  mismatched_tokens: mismatchedTokens,
  duplicated_tokens: duplicatedTokens,
  failover_gap_ms_p99: gaps.length ? Math.round(percentile(gaps, 99)) : null,
  disturbed_streams: disturbed.length,
  gateway_failovers: gatewayFailovers,
  rss_growth_mb: rss,
  rss_growth_frac_max: round(worstFrac, 3),
  rss_detail: rssDetail,
  recovered_after_nats_restart_s: events.find((e) => e.kind === 'nats')?.recoveredS ?? null,
  advisories: {
    sent: advisories.length,
    accepted: advisories.filter((s) => s === 201).length,
    rate_limited: advisories.filter((s) => s === 429).length,
  },
  faults: {
    corruptions_injected: ledger.filter((e) => e.fault === 'corrupt').reduce((a, e) => a + e.target.chunks.length, 0),
    corruptions_read: read.size,
    detections: detections.length,
    detections_answered_correctly: answered.length,
    peer_pauses: ledger.filter((e) => e.fault === 'pause').length,
    peer_pauses_past_deadline: ledger.filter((e) => e.fault === 'pause' && e.pulls_in_flight_past_deadline > 0).length,
    ledger_unmatched: ledger.filter((e) => e.matched === false).length,
    events: events.map((e) => ({ kind: e.kind, node: e.node ?? null, at_s: round((e.startMs - t0) / 1000, 1) })),
  },
  ledger,
  failed_unexplained: failedClean.filter((x) => noRecovery(x, overlapping(x)) === null).length,
  failures: failedClean.map((x) => ({
    request: x.id ?? null,
    session: x.session,
    turn: x.turn,
    code: x.error.code,
    message: x.error.message ?? null,
    node: failedNodes.get(x) ?? null,
    seconds: round((x.endedMs - x.startedMs) / 1000, 1),
    at_s: round((x.startedMs - t0) / 1000, 1),
    faults_overlapping: overlapping(x),
    why_no_recovery: noRecovery(x, overlapping(x)),
  })),
  fault_counters: {
    crc_failures: totals.crc,
    restore_fallbacks: totals.fallbacks,
    peer_deadlines: totals.deadlines,
    journal_replayed_segments: totals.replayed,
  },
  definitions: {
    lost: 'no answer at all within the gateway deadline + 15 s, or an end without a final event or an error code',
    failed_clean: 'ended with an error carrying a code (timeout, data_loss, no_node_available, …); each is listed in `failures`',
    corruptions_read:
      "distinct corrupted chunks later read: a targeted chunk the targeted node's drop log (its why subject, polled every 5 s and before each kill) shows dropped as corrupt, i.e. read and failed its CRC32C",
    detections_answered_correctly:
      'of those, the ones where every request on that node whose prompt held the chunk at the moment of the drop answered as the clean run did',
    peer_pauses_past_deadline:
      "pauses during which an advisory placed on another node made it pull the paused node's chunks, the pause outlasting the pull's deadline (NODE_PEER_DEADLINE_BASE_MS plus size over link speed)",
    ledger: 'one entry per targeted fault: injected at, target, expected detection, and matched (true, false, or why it could not be)',
    mismatched_tokens:
      'over completed requests whose text differs from the clean re-run: characters from the first difference to the longer end (mnemo-tiny is byte-level: a character is a token)',
    duplicated_tokens: 'over those, characters the chaos text has beyond the clean one',
    failover_gap_ms_p99:
      'p99 over completed streams in flight while a fault struck of the largest gap between two pieces of text, as their clients saw it (continued streams among them when the gateway fails over)',
    gateway_failovers:
      "the gateway's own count of failovers by outcome, and the upper bound of the bucket of its failover-gap histogram holding the p99 (null without failover)",
    rss_growth_mb:
      'per process incarnation, from the end of its 60 s warm-up to its last sample, minus the change in KV host-pool bytes in use; rss_growth_frac_max is the largest growth over the warm figure (0 when none grew)',
  },
};
mkdirSync('bench/results', { recursive: true });
writeFileSync('bench/results/chaos.json', JSON.stringify(result, null, 2) + '\n');
log(
  `requests ${result.requests}, completed ${result.completed}, failed clean ${result.failed_clean} ${JSON.stringify(codes)}, lost ${result.lost}, mismatched ${result.mismatched_tokens}, duplicated ${result.duplicated_tokens}, gap p99 ${result.failover_gap_ms_p99} ms, RSS growth max ${result.rss_growth_frac_max}, NATS recovery ${result.recovered_after_nats_restart_s} s`,
);
process.exit(0);
