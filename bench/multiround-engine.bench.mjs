// The multi-round benchmark on the reference engine, for the twin's validation against a real model
// (docs/twin.md §3, "Against the reference engine"): the nodes run fortune-base, a transformer
// trained here (tools/train), on the CPU backend, instead of the sim engine's sleep model, on a
// workload that fits its 4,096-token context. Two live runs with different seeds:
// - calibration (seed --calibration-seed): symphony once, every node tracing its forward steps
//   (NODE_STEP_TRACE); the twin's compute port is fitted to those steps (libs/twin fitEngineSteps)
//   as they ran, four nodes sharing two cores, and frozen into the results file;
// - validation (seed --seed): the headline routers, --passes each, in alternating order, with
//   nothing fitted to them. `npm run twin -- validate --engine` then runs the twin with the frozen
//   fit on this run's sessions and compares.
// Writes bench/results/multiround-engine.json.
// Run: npm run bench -- multiround-engine [--quick] [--users N] [--sessions N] [--passes N] [--systems a,b]
//   [--seed S] [--calibration-seed S]
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os, { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { SERVING_SYSTEMS } from '@mnemo/kv-core';
import { arg, DEFAULT_WORKLOAD, round, routingCheck, startNats, workload, workloadStats } from '@mnemo/testkit';
import { fitEngineSteps } from '@mnemo/twin';
import { CLUSTER, runConfig } from './multiround/cluster.mjs';
import { passFigures, pool, summarize } from './multiround/summary.mjs';
import { quick, root } from './lib/bench.args.mjs';

const MODEL = 'fortune-base';
/** fortune-base's KV on the CPU backend: 8 layers × K and V × 2 heads × 32 dims × 4 B. */
const KV_LAYOUT = { layers: 8, rowElems: 64 };
const KV_BYTES_PER_TOKEN = KV_LAYOUT.layers * 2 * KV_LAYOUT.rowElems * 4;
/**
 * The cluster: the sim benchmark's shape (nodes, batch, heartbeat, SSD pool) with the trained
 * model's context, and device and host-pool sizes for its KV, 16 times the sim nodes' bytes per token.
 */
const ENGINE_CLUSTER = {
  ...CLUSTER,
  model: MODEL,
  maxContext: 4096,
  kvBlocks: 1024,
  hostPool: '256MiB',
};
const USERS = Number(arg('users', quick ? 8 : 32));
const SESSIONS = Number(arg('sessions', quick ? 8 : 96));
const PASSES = Number(arg('passes', quick ? 1 : 2));
const SEED = Number(arg('seed', 20261201));
const CALIBRATION_SEED = Number(arg('calibration-seed', DEFAULT_WORKLOAD.seed));
if (SEED === CALIBRATION_SEED) throw new Error('--seed must differ from --calibration-seed: the validation must not see the calibration');
const SYSTEMS = arg('systems', 'symphony,llmd,conductor').split(',');
/**
 * The scheduler's configured prefill speed before any node has measured itself (the operator's
 * GPU figure; the nodes' heartbeats then bring what they measure): for the calibration run, about
 * what one 2-core node computes fortune-base at; for the validation runs, the calibration's fit.
 */
const PRIOR_PREFILL_US = 150;

/**
 * ShareGPT's lengths scaled to the model's context: the tail points (13K and 56K tokens) divided
 * by 16 become 812 and 3,500; the longest session stays under the 4,096-token context with room
 * for a reply. Per-turn statistics are the sim benchmark's.
 */
const workloadOptions = (seed) => ({
  ...DEFAULT_WORKLOAD,
  seed,
  sessions: SESSIONS,
  lengthScale: 16,
  maxSessionTokens: 3_800,
  ...(quick ? { maxTurns: 6, thinkCompression: 4 * DEFAULT_WORKLOAD.thinkCompression } : {}),
});

function engineOf(traceDir, prefillUs) {
  return {
    model: MODEL,
    maxContext: ENGINE_CLUSTER.maxContext,
    nodeEnv: (nodeId) => ({
      NODE_ENGINE: 'reference',
      NODE_REFERENCE_BACKEND: 'cpu',
      NODE_MODELS: join(root, 'tools/train/models', MODEL),
      NODE_MAX_BATCH: String(ENGINE_CLUSTER.maxBatch),
      NODE_KV_BLOCKS: String(ENGINE_CLUSTER.kvBlocks),
      NODE_HEARTBEAT_MS: String(ENGINE_CLUSTER.heartbeatMs),
      NODE_KV_HOST_POOL: ENGINE_CLUSTER.hostPool,
      ...(traceDir ? { NODE_STEP_TRACE: join(traceDir, `${nodeId}.jsonl`) } : {}),
    }),
    schedulerEnv: { SCHEDULER_PREFILL_US_PER_TOKEN: String(Math.max(1, Math.round(prefillUs))) },
  };
}

const readSteps = (dir) =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .flatMap((f) =>
      readFileSync(join(dir, f), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
    );

// ---- main ------------------------------------------------------------------------------------
const started = performance.now();
const minutes = () => round((performance.now() - started) / 60_000, 1);
const nats = process.env.NATS_URL ? { url: process.env.NATS_URL, stop: async () => undefined } : await startNats();
const dataDir = mkdtempSync(join(tmpdir(), 'mnemo-multiround-engine-'));
const traceDir = mkdtempSync(join(tmpdir(), 'mnemo-steps-'));
const rampOf = (sessions) => sessions.reduce((a, x) => a + x.turns.reduce((b, t) => b + t.readMs + t.typeMs, 0), 0) / sessions.length;
const common = (sessions) => ({ natsUrl: nats.url, sessions, benchDir: dataDir, users: USERS, rampMs: rampOf(sessions) });
try {
  // Calibration: its own sessions, symphony once, every step traced.
  const calSessions = workload(workloadOptions(CALIBRATION_SEED));
  console.log(`calibration run (seed ${CALIBRATION_SEED}, ${calSessions.length} sessions)…`);
  const calEngine = engineOf(traceDir, PRIOR_PREFILL_US);
  const cal = await runConfig(
    'cal-symphony',
    { system: SERVING_SYSTEMS.symphony, schedulerEnv: calEngine.schedulerEnv },
    { ...common(calSessions), engine: calEngine },
  );
  const steps = readSteps(traceDir);
  const fit = fitEngineSteps(steps);
  console.log('engine fit', JSON.stringify(fit), `(${steps.length} steps, ${minutes()} min so far)`);

  // Validation: another seed's sessions, each system --passes times, priced by nothing from them.
  const options = workloadOptions(SEED);
  const sessions = workload(options);
  const stats = workloadStats(sessions, options);
  const engine = engineOf(undefined, fit.cost.prefillPerTokenMs * 1000);
  const configs = Object.fromEntries(SYSTEMS.map((name) => [name, { system: SERVING_SYSTEMS[name], schedulerEnv: engine.schedulerEnv }]));
  for (const name of SYSTEMS) if (!SERVING_SYSTEMS[name]) throw new Error(`unknown system ${name}`);
  const runs = Object.fromEntries(SYSTEMS.map((k) => [k, []]));
  const passes = [];
  for (let pass = 0; pass < PASSES; pass++) {
    passes.push({});
    for (const name of pass % 2 === 0 ? SYSTEMS : [...SYSTEMS].reverse()) {
      console.log(`pass ${pass + 1}/${PASSES}: ${name} (${minutes()} min so far)…`);
      const r = await runConfig(name, configs[name], { ...common(sessions), engine });
      runs[name].push(r);
      passes[pass][name] = passFigures(r);
      console.log(name, JSON.stringify(passes[pass][name]));
    }
  }
  const s = Object.fromEntries(Object.entries(runs).map(([k, rs]) => [k, summarize(pool(rs))]));
  const check = routingCheck(
    passes,
    ['llmd', 'conductor'].filter((x) => SYSTEMS.includes(x)),
  );
  const result = {
    model: `${MODEL} (reference engine, CPU backend; trained in tools/train)`,
    env: {
      cpu_threads: cpus().length,
      load_average_at_end: os.loadavg().map((x) => round(x, 1)),
      contention: `${ENGINE_CLUSTER.nodes} node-managers, the scheduler, NATS and the client share this machine's cores: each engine step ran at that concurrency, and the calibration measured it there`,
      wall_minutes: minutes(),
      quick,
      users: USERS,
      passes: PASSES,
    },
    cluster: {
      ...ENGINE_CLUSTER,
      systems: Object.fromEntries(SYSTEMS.map((k) => [k, { ...SERVING_SYSTEMS[k], passes: PASSES }])),
    },
    kv_bytes: {
      layout: `${KV_LAYOUT.layers} layers × ${KV_LAYOUT.rowElems} floats per K/V row (fortune-base, fp32 on the CPU backend)`,
      layers: KV_LAYOUT.layers,
      bytes_per_token: KV_BYTES_PER_TOKEN,
      bytes_per_chunk: KV_BYTES_PER_TOKEN * 256,
    },
    // The twin's compute port for this cluster, fitted on the calibration run only and frozen here.
    engine_fit: {
      seed: CALIBRATION_SEED,
      steps: steps.length,
      cost: Object.fromEntries(Object.entries(fit.cost).map(([k, v]) => [k, round(v, 6)])),
      prefill: fit.prefill,
      decode: fit.decode,
      calibration_run: passFigures(cal),
      // What its peer pulls cost the calibration run's passes: the twin fits its peer link to it (libs/twin fitPeerLink).
      peer: { restored_tokens: cal.kv.peerRestoredTokens, blocked_ms: round(cal.kv.peerBlockedS * 1000) },
      how: 'libs/twin fitEngineSteps: least squares with non-negative terms over every forward step the nodes traced (NODE_STEP_TRACE), prefill as base + per token + per attended token, decode as base + per sequence + per context token',
    },
    cost_model: {
      pcie_restore_chunk_us: 0,
      scheduler: {
        prefill_us_per_token: { calibration: PRIOR_PREFILL_US, validation: round(fit.cost.prefillPerTokenMs * 1000, 1) },
        queue_ms_per_request: 40,
        move_margin_ms: 40,
        measured_costs: 'on: each node priced with what it measured of itself',
      },
    },
    workload: {
      generator: 'libs/testkit/src/workloads/multiround.workload.ts (workload(options) with the options below reproduces the sessions)',
      options,
      ...stats,
      requests: s[SYSTEMS[0]]?.requests ?? null,
      users_start_over_s: round(rampOf(sessions) / 1000),
      how_scaled: `ShareGPT's session lengths divided by ${options.lengthScale} and capped at ${options.maxSessionTokens} tokens: the model's context is ${ENGINE_CLUSTER.maxContext}`,
    },
    policies: s,
    passes,
    per_pass: check.per_pass,
    noise: check.noise,
    routing_check: check.verdict,
  };
  writeFileSync(join(root, 'bench/results/multiround-engine.json'), JSON.stringify(result, null, 2) + '\n');
  console.log(JSON.stringify({ ...result, policies: undefined }, null, 2));
} finally {
  await nats.stop();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(traceDir, { recursive: true, force: true });
}
