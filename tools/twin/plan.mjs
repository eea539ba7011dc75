// `npm run twin -- plan`: the cheapest configuration of each serving system that meets an SLO for
// N users, found on the twin at Symphony's experiment's setup (modelled GPUs, ShareGPT-like
// sessions, closed-loop users) with the GPU and model asked for. Each candidate is one short twin
// run; the search (plan.search.mjs) bounds how many run, the cost model (plan.cost.mjs) ranks them.
import { GPUS, MODELS, rooflineCompute } from '@mnemo/twin';
import { SERVING_SYSTEMS } from '@mnemo/kv-core';
import { gpuCluster, SYMPHONY_HARDWARE } from './gpu-cluster.mjs';
import { paperRun, round } from './paper-run.mjs';
import { baseSessions, PAPER_WORKLOAD, paperSessions } from './paper-workload.mjs';
import { costModel, hourlyCost, nodesFor, PLAN_PRICES } from './plan.cost.mjs';
import { planPolicy } from './plan.search.mjs';
import { ttftFloorMs, verifyWhole } from './plan.verify.mjs';
import { poolWorkers, runPool } from './run-pool.mjs';

const GiB = 1024 ** 3;

/**
 * The search's bounds and each run's shape. Runs are the symphony experiment's (same workload,
 * think-time compression, seed) over a shorter window: 40 s simulated of ramp and warm-up, then
 * 30 s measured. A cluster of more than `cellInstances` runs as a cell of that many instances
 * carrying its share of the users (users × cell ÷ instances), grown where that would leave fewer
 * than `minCellUsers`: the twin's cost grows with the users it runs, and a closed-loop user
 * population spread evenly over identical nodes loads each the same. Both are limits written in
 * docs/twin.md.
 */
export const PLAN_RUN = {
  thinkCompression: 6,
  rampMs: 10_000,
  warmMs: 40_000,
  untilMs: 70_000,
  seed: 1,
  cellInstances: 4,
  /** …grown past one node where that would leave fewer users than this: P99 over too few requests is their maximum. */
  minCellUsers: 128,
  /** The best configuration found on a cell is verified on whole-cluster runs up to this many users (a run's cost grows with them). */
  fullCheckMaxUsers: 512,
  /** Where the instance search starts: users ÷ this (the symphony experiment's A100s held ~32 users each within its TPOT SLO). */
  usersPerInstanceStart: 32,
  maxInstances: 256,
  /** Doubling the instances must cut P99 TTFT by this much, or the SLO is taken as under the policy's floor. */
  floorGain: 0.1,
  base: { hostGb: 256, ssdTb: 4 },
  hostGbGrid: [64, 256, 1024],
  ssdTbGrid: [0, 4],
  /**
   * Without --slo-tpot-ms, Symphony's TPOT SLO built the same way (§4.2, Fig. 11: 1.5× vLLM's TPOT
   * at its lightest load, 64 users on 8 instances): 1.5× the roofline decode step of 8 sequences of
   * 4K tokens on the GPU asked for (A100, Llama-3.1-8B: 20.2 ms; the experiment's own is 19.8 ms).
   */
  defaultTpot: { overLight: 1.5, seqs: 8, contextTokens: 4096 },
};

/** The TPOT SLO used when none is given, from the hardware tables (PLAN_RUN.defaultTpot). */
export function defaultTpotSloMs({ gpu, model }, o = PLAN_RUN) {
  const hw = planHardware({ gpu, model, instances: 1, hostGb: 0, ssdTb: 0 });
  const d = o.defaultTpot;
  return round(d.overLight * rooflineCompute(hw.gpu, hw.model, hw.efficiency).decodeMs(d.seqs, d.seqs * d.contextTokens), 1);
}

/** One instance's hardware: Symphony's testbed with the GPU and model asked for, the node's memory split over its GPUs. */
export function planHardware({ gpu, model, instances, hostGb, ssdTb }) {
  const perInstance = PLAN_PRICES.gpusPerNode;
  return {
    ...SYMPHONY_HARDWARE,
    gpu: GPUS[gpu],
    model: MODELS[model],
    instances,
    // As SYMPHONY_HARDWARE: a quarter of the node's DRAM is the OS's and the serving processes'.
    hostPoolBytes: Math.floor((((hostGb * 1e9) / perInstance) * 0.75) / GiB) * GiB,
    ssdPoolBytes: Math.floor((ssdTb * 1e12) / perInstance / GiB) * GiB,
  };
}

/** One twin run of `users` on `instances` (no cell): the summary a plan reads, and whether it meets `slo`. */
function twinRun({ policy, users, instances, gpu, model, hostGb, ssdTb, slo, o, base, now }) {
  const started = now();
  const { sessions } = paperSessions({ ...PAPER_WORKLOAD, thinkCompression: o.thinkCompression }, users * 40, base);
  const hw = planHardware({ gpu, model, instances, hostGb, ssdTb });
  const config = gpuCluster(hw, policy, { users, rampMs: o.rampMs, seed: o.seed, tenant: `plan-${policy}` });
  const s = paperRun(config, sessions, { warmMs: o.warmMs, untilMs: o.untilMs });
  const tpotOk = slo.tpotMs === null || (s.tpot_mean_ms !== null && s.tpot_mean_ms <= slo.tpotMs);
  const meets = s.failed === 0 && s.ttft_p99_ms !== null && s.ttft_p99_ms <= slo.ttftMs && tpotOk;
  const summary = {
    simulated: { instances, users },
    requests: s.requests,
    failed: s.failed,
    ttft_p99_ms: s.ttft_p99_ms,
    ttft_floor_ms: s.ttft_floor_ms,
    ttft_mean_ms: s.ttft_mean_ms,
    tpot_mean_ms: s.tpot_mean_ms,
    prefix_hit_rate: s.prefix_hit_rate,
    pool_evictions: s.pool_evictions,
    wall_s: round((now() - started) / 1000, 1),
  };
  return { meets, p99: s.ttft_p99_ms, tpotOk, summary };
}

/** A cached twin evaluator of one policy, each candidate run as its cell: the cache key is what the policy uses (InferCept has no SSD tier). */
export function twinEvaluator({ policy, users, gpu, model, slo, o = PLAN_RUN, base, now = () => performance.now(), onRun = () => {} }) {
  const tiers = SERVING_SYSTEMS[policy].tiers;
  const cache = new Map();
  return ({ instances, hostGb, ssdTb }) => {
    const cell = Math.min(instances, Math.max(o.cellInstances, Math.ceil((o.minCellUsers * instances) / users)));
    const cellUsers = Math.max(1, Math.round((users * cell) / instances));
    const key = [cell, cellUsers, tiers.includes('host') ? hostGb : '-', tiers.includes('ssd') ? ssdTb : '-'].join('|');
    if (cache.has(key)) return { ...cache.get(key), reused: true };
    const r = twinRun({ policy, users: cellUsers, instances: cell, gpu, model, hostGb, ssdTb, slo, o, base, now });
    cache.set(key, r);
    onRun({ policy, instances, hostGb, ssdTb, ...r });
    return r;
  };
}

/** The search's grid and bounds for a question. */
function searchShape({ users }, o) {
  return {
    grid: o.hostGbGrid.flatMap((hostGb) => o.ssdTbGrid.map((ssdTb) => ({ hostGb, ssdTb }))),
    start: Math.max(1, Math.ceil(users / o.usersPerInstanceStart)),
    max: Math.min(o.maxInstances, Math.max(users, 1)),
  };
}

const sloOf = ({ gpu, model, sloTtftMs, sloTpotMs }, o) => ({
  ttftMs: sloTtftMs,
  tpotMs: sloTpotMs === null ? defaultTpotSloMs({ gpu, model }, o) : sloTpotMs,
});

/**
 * One policy's plan (a worker thread's task): `emit` hears each twin run as it ends. The cells'
 * answer is an estimate (`slice_estimate`): where it was run as a cell, it is run whole — every
 * instance, every user, up to `fullCheckMaxUsers` — at the memory point chosen and stepped up on
 * whole runs until it meets (plan.verify.mjs); `best` is the verified answer, `verification` its runs.
 */
export function planOnePolicy({ q, policy, o = PLAN_RUN }, emitRun = () => {}) {
  const base = baseSessions({ ...PAPER_WORKLOAD, thinkCompression: o.thinkCompression });
  const slo = sloOf(q, o);
  const now = () => performance.now();
  // Each run's own lower bound on its P99 TTFT (paper-run.mjs): the plan's floor is the lowest of them,
  // so no run it made goes under the floor it reports.
  const floors = [];
  const emit = (r) => {
    if (typeof r.summary?.ttft_floor_ms === 'number') floors.push(r.summary.ttft_floor_ms);
    emitRun(r);
  };
  const floorOf = () => (floors.length ? Math.min(...floors) : null);
  const evaluate = twinEvaluator({ policy, users: q.users, gpu: q.gpu, model: q.model, slo, o, base, now, onRun: emit });
  const shape = searchShape(q, o);
  const plan = planPolicy({ gpu: q.gpu, evaluate, base: o.base, floorGain: o.floorGain, ...shape });
  const s = plan.best;
  // The workload's uncached prefill P99 on an idle GPU: a reference only. Runs measure the requests that finish
  // in their window, with whatever their prefixes found cached, so it bounds none of them and decides nothing.
  const reference = ttftFloorMs(base, planHardware({ gpu: q.gpu, model: q.model, instances: 1, hostGb: 0, ssdTb: 0 }));
  const out = { ...plan, slice_estimate: s, uncached_prefill_p99_ms: reference };
  // Where no cell met, "cannot meet" must rest on whole-cluster runs too: the cells' largest count at the
  // base memory point is run whole and stepped up as any answer is (unless the cells were the whole cluster).
  const largest = Math.max(
    0,
    ...plan.tried.filter((t) => t.ran && t.host_gb === o.base.hostGb && t.ssd_tb === o.base.ssdTb).map((t) => t.instances),
  );
  const start = s ? s.instances : largest;
  if (start <= o.cellInstances)
    return {
      ...out,
      ttft_floor_ms: floorOf(),
      verification: { whole_cluster: false, why: s ? 'the cell was the whole cluster' : 'the cells were the whole cluster' },
    };
  if (q.users > o.fullCheckMaxUsers)
    return {
      ...out,
      ttft_floor_ms: floorOf(),
      best: null,
      reason: s ? `not verified: over ${o.fullCheckMaxUsers} users a whole-cluster run takes minutes here` : `cells: ${plan.reason}`,
      verification: { whole_cluster: false, why: 'too many users to run whole' },
    };
  const g = s ? { hostGb: s.host_gb, ssdTb: s.ssd_tb } : { ...o.base };
  const run = (instances) => {
    const r = twinRun({ policy, users: q.users, instances, gpu: q.gpu, model: q.model, ...g, slo, o, base, now });
    emit({ policy, instances, ...g, check: true, ...r });
    return r;
  };
  const v = verifyWhole(run, { start, max: shape.max, floorGain: o.floorGain, sloTtftMs: slo.ttftMs });
  const met = v.runs.find((r) => r.instances === v.instances);
  const best = met
    ? {
        instances: met.instances,
        host_gb: g.hostGb,
        ssd_tb: g.ssdTb,
        cost_usd_per_hour: round(hourlyCost({ gpu: q.gpu, instances: met.instances, ...g })),
        nodes: nodesFor(met.instances),
        ttft_p99_ms: met.ttft_p99_ms,
        tpot_mean_ms: met.tpot_mean_ms,
        requests: met.requests,
      }
    : null;
  return {
    ...out,
    ttft_floor_ms: floorOf(),
    best,
    reason: v.reason,
    verification: { whole_cluster: true, meets: best !== null, runs: v.runs },
  };
}

/**
 * The plan for each policy asked for, the policies on `workers` threads (run-pool.mjs: each plan
 * is the same on any thread, only the wall time changes); `onRun` hears each twin run as it ends,
 * `onPolicy` each policy's plan.
 */
export async function capacityPlan(
  q,
  { o = PLAN_RUN, onRun = () => {}, onPolicy = () => {}, now = () => performance.now(), workers } = {},
) {
  const t0 = now();
  const { users, model, gpu, sloTpotMs, policies } = q;
  const slo = sloOf(q, o);
  const { start, max } = searchShape(q, o);
  const results = await runPool({
    module: import.meta.url,
    fn: 'planOnePolicy',
    tasks: policies.map((policy) => ({ q, policy, o })),
    onEvent: onRun,
    onDone: (i) => onPolicy(policies[i]),
    ...(workers ? { workers } : {}),
  });
  const plans = Object.fromEntries(policies.map((p, i) => [p, results[i]]));
  return {
    question: {
      users,
      model,
      gpu,
      slo: { ttft_p99_ms: slo.ttftMs, tpot_mean_ms: slo.tpotMs, tpot_is_default: sloTpotMs === null },
      policies,
    },
    plans,
    search: {
      instances: `doubling from ${start} (users ÷ ${o.usersPerInstanceStart}) up to ${max}, then bisecting, at the base memory point; a policy whose P99 TTFT falls less than ${o.floorGain * 100}% when its instances double is reported as unable to meet the SLO`,
      memory:
        'each other grid point, cheapest first, run once at the most instances at which it would still be cheaper than the best so far; bisected down only when it meets there',
      base: { host_gb_per_node: o.base.hostGb, ssd_tb_per_node: o.base.ssdTb },
      grid: { host_gb_per_node: o.hostGbGrid, ssd_tb_per_node: o.ssdTbGrid },
      run: {
        ...o,
        measured: `requests sent after ${o.warmMs / 1000} s of ${o.untilMs / 1000} simulated s`,
        cell: `clusters over ${o.cellInstances} instances run as a cell of ${o.cellInstances} (more where that leaves under ${o.minCellUsers} users) with its share of the users`,
      },
      twin_runs: Object.values(plans).reduce((a, p) => a + p.tried.filter((t) => t.ran && !t.reused).length, 0),
      verify: `the cells' answer run whole at its memory point; where it misses, instances doubled on whole runs until one meets, then bisected; a policy is reported unable to meet the SLO where the SLO is under its ttft_floor_ms, where doubling cuts whole-cluster P99 TTFT by less than ${o.floorGain * 100}%, or at ${max} instances`,
      whole_cluster_runs: Object.values(plans).reduce((a, p) => a + (p.verification.runs?.length ?? 0), 0),
    },
    cost_model: costModel(),
    workers: Math.min(workers ?? poolWorkers(), policies.length),
    wall_s: round((now() - t0) / 1000, 1),
  };
}

/** The table an operator reads, one row per policy: the verified answer beside the cells' estimate. */
export function planTable(result) {
  const head = [
    'policy',
    'instances',
    'nodes',
    'host GB/node',
    'SSD TB/node',
    '$/hour',
    'P99 TTFT ms',
    'mean TPOT ms',
    'cell estimate',
    'floor ms',
    'runs',
  ];
  const rows = Object.entries(result.plans).map(([policy, p]) => {
    const b = p.best;
    const e = p.slice_estimate;
    const runs = `${p.tried.filter((t) => t.ran && !t.reused).length} + ${p.verification?.runs?.length ?? 0} whole`;
    const est = e ? `${e.instances} (${e.ttft_p99_ms} ms)` : 'none';
    const floor = String(p.ttft_floor_ms ?? '');
    return (
      b
        ? [
            policy,
            b.instances,
            b.nodes,
            b.host_gb,
            b.ssd_tb,
            b.cost_usd_per_hour.toFixed(2),
            b.ttft_p99_ms,
            b.tpot_mean_ms,
            est,
            floor,
            runs,
          ]
        : [policy, 'cannot meet', '', '', '', '', '', '', est, floor, runs]
    ).map(String);
  });
  const width = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r) => r.map((c, i) => (i ? c.padStart(width[i]) : c.padEnd(width[i]))).join('  ');
  const notes = Object.entries(result.plans)
    .filter(([, p]) => !p.best)
    .map(([policy, p]) => `${policy}: ${p.reason}`);
  return [line(head), ...rows.map(line), ...notes].join('\n');
}
