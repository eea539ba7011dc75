// One serving system's capacity plan on the twin: each candidate configuration is one short run
// of the symphony experiment's workload on a cell of the cluster (plan.search.ts bounds how many
// run, plan.cost.ts ranks them), and the cells' answer is then run whole (plan.verify.ts).
import { SERVING_SYSTEMS } from '@mnemo/kv-core';
import { gpuCluster } from '../../scenario/gpu-cluster.scenario.js';
import { paperRun } from '../shared/paper-run.js';
import { cycleSessions } from '../shared/paper-workload.js';
import type { TwinSession } from '../../workload/session.workload.js';
import { hourlyCost, nodesFor, roundUsd, type MemoryPoint } from './plan.cost.js';
import { planPolicy, type Candidate, type Evaluation, type PlanBest, type PolicySearch } from './plan.search.js';
import {
  PLAN_RUN,
  planHardware,
  searchShape,
  sloOf,
  tenths,
  type PlanPolicy,
  type PlanPorts,
  type PlanQuestion,
  type PlanRunOptions,
  type PlanSlo,
} from './plan.setup.js';
import { ttftFloorMs, verifyWhole, type WholeRun } from './plan.verify.js';

/** What the plan keeps of one twin run. */
export interface PlanRunSummary {
  /** What was run: the cell, or the whole cluster. */
  readonly simulated: { readonly instances: number; readonly users: number };
  readonly requests: number;
  readonly failed: number;
  readonly ttft_p99_ms: number | null;
  readonly ttft_floor_ms: number | null;
  readonly ttft_mean_ms: number | null;
  readonly tpot_mean_ms: number | null;
  readonly prefix_hit_rate: number | null;
  readonly pool_evictions: number;
  readonly wall_s: number;
}

export type PlanEvaluation = Evaluation<PlanRunSummary>;

/** A twin run as it ends, for progress: a cell's, or (`check`) a whole cluster's. */
export type PlanRunEvent = PlanEvaluation &
  MemoryPoint & { readonly policy: PlanPolicy; readonly instances: number; readonly check?: boolean };

/** One run's inputs beyond the configuration. */
interface RunContext {
  readonly policy: PlanPolicy;
  readonly q: Pick<PlanQuestion, 'gpu' | 'model'>;
  readonly slo: PlanSlo;
  readonly o: PlanRunOptions;
  readonly ports: PlanPorts;
  readonly base: readonly TwinSession[];
  readonly now: () => number;
}

/** One twin run of `users` on `instances` (no cell): the summary a plan reads, and whether it meets the SLO. */
function twinRun(c: RunContext, users: number, instances: number, g: MemoryPoint): PlanEvaluation {
  const { policy, q, slo, o, now } = c;
  const started = now();
  const sessions = cycleSessions(c.base, users * 40, c.ports.systemTokens);
  const hw = planHardware({ gpu: q.gpu, model: q.model, instances, ...g });
  const config = gpuCluster(hw, policy, { users, rampMs: o.rampMs, seed: o.seed, tenant: `plan-${policy}` });
  const s = paperRun(config, sessions, { warmMs: o.warmMs, untilMs: o.untilMs });
  const tpotOk = s.tpot_mean_ms !== null && s.tpot_mean_ms <= slo.tpotMs;
  const meets = s.failed === 0 && s.ttft_p99_ms !== null && s.ttft_p99_ms <= slo.ttftMs && tpotOk;
  const summary: PlanRunSummary = {
    simulated: { instances, users },
    requests: s.requests,
    failed: s.failed,
    ttft_p99_ms: s.ttft_p99_ms,
    ttft_floor_ms: s.ttft_floor_ms,
    ttft_mean_ms: s.ttft_mean_ms,
    tpot_mean_ms: s.tpot_mean_ms,
    prefix_hit_rate: s.prefix_hit_rate,
    pool_evictions: s.pool_evictions,
    wall_s: tenths((now() - started) / 1000),
  };
  return { meets, p99: s.ttft_p99_ms, tpotOk, summary };
}

/**
 * A cached twin evaluator of one policy, each candidate run as its cell: the cache key is what the
 * policy uses (InferCept has no SSD tier), so candidates it cannot tell apart share one run.
 */
function twinEvaluator(c: RunContext, users: number, onRun: (e: PlanRunEvent) => void): (k: Candidate) => PlanEvaluation {
  const { o } = c;
  const tiers = SERVING_SYSTEMS[c.policy].tiers as readonly string[];
  const cache = new Map<string, PlanEvaluation>();
  return ({ instances, hostGb, ssdTb }) => {
    const cell = Math.min(instances, Math.max(o.cellInstances, Math.ceil((o.minCellUsers * instances) / users)));
    const cellUsers = Math.max(1, Math.round((users * cell) / instances));
    const key = [cell, cellUsers, tiers.includes('host') ? hostGb : '-', tiers.includes('ssd') ? ssdTb : '-'].join('|');
    const known = cache.get(key);
    if (known) return { ...known, reused: true };
    const r = twinRun(c, cellUsers, cell, { hostGb, ssdTb });
    cache.set(key, r);
    onRun({ policy: c.policy, instances, hostGb, ssdTb, ...r });
    return r;
  };
}

/** What a worker thread is sent for one policy (plain data: it is copied to the thread). */
export interface PlanTask {
  readonly q: PlanQuestion;
  readonly policy: PlanPolicy;
  readonly o?: PlanRunOptions;
}

/** How the cells' answer was checked on the whole cluster. */
export interface PlanVerification {
  readonly whole_cluster: boolean;
  readonly meets?: boolean;
  readonly why?: string;
  readonly runs?: readonly WholeRun[];
}

/** One policy's plan: the verified answer (`best`), the cells' estimate, and every run made. */
export interface PolicyPlan extends PolicySearch {
  /** The cells' answer, before the whole-cluster verification. */
  readonly slice_estimate: PlanBest | null;
  readonly uncached_prefill_p99_ms: number;
  readonly ttft_floor_ms: number | null;
  readonly verification: PlanVerification;
}

/**
 * One policy's plan (a worker thread's task): `emit` hears each twin run as it ends. The cells'
 * answer is an estimate (`slice_estimate`): where it was run as a cell, it is run whole — every
 * instance, every user, up to `fullCheckMaxUsers` — at the memory point chosen and stepped up on
 * whole runs until it meets (plan.verify.ts); `best` is the verified answer, `verification` its runs.
 */
export function planOnePolicy(
  ports: PlanPorts,
  { q, policy, o = PLAN_RUN }: PlanTask,
  emitRun: (e: PlanRunEvent) => void = () => {},
): PolicyPlan {
  const base = ports.base(o.thinkCompression);
  const c: RunContext = { policy, q, slo: sloOf(q, o), o, ports, base, now: () => performance.now() };
  // Each run's own lower bound on its P99 TTFT (paper-run.ts): the plan's floor is the lowest of them,
  // so no run it made goes under the floor it reports.
  const floors: number[] = [];
  const emit = (r: PlanRunEvent) => {
    if (typeof r.summary.ttft_floor_ms === 'number') floors.push(r.summary.ttft_floor_ms);
    emitRun(r);
  };
  const floorOf = () => (floors.length ? Math.min(...floors) : null);
  const evaluate = twinEvaluator(c, q.users, emit);
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
  const g: MemoryPoint = s ? { hostGb: s.host_gb, ssdTb: s.ssd_tb } : { ...o.base };
  const run = (instances: number): PlanEvaluation => {
    const r = twinRun(c, q.users, instances, g);
    emit({ policy, instances, ...g, check: true, ...r });
    return r;
  };
  const v = verifyWhole(run, { start, max: shape.max, floorGain: o.floorGain });
  const met = v.runs.find((r) => r.instances === v.instances);
  const best: PlanBest | null = met
    ? {
        instances: met.instances,
        host_gb: g.hostGb,
        ssd_tb: g.ssdTb,
        cost_usd_per_hour: roundUsd(hourlyCost({ gpu: q.gpu, instances: met.instances, ...g })),
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
