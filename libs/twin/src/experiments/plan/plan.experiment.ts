// `npm run twin -- plan`'s experiment: the cheapest configuration of each serving system that
// meets an SLO for N users, found on the twin at Symphony's experiment's setup (modelled GPUs,
// ShareGPT-like sessions, closed-loop users) with the GPU and model asked for. Each policy is
// planned on its own thread (plan.policy.ts); this gathers their plans into the results file.
import { poolWorkers, runPool } from '../shared/run-pool.js';
import { costModel, type PlanCostModel } from './plan.cost.js';
import type { PlanRunEvent, PlanTask, PolicyPlan } from './plan.policy.js';
import { PLAN_RUN, searchShape, sloOf, tenths, type PlanPolicy, type PlanQuestion, type PlanRunOptions } from './plan.setup.js';

/**
 * Where a thread finds one policy's plan: the URL of a module whose export `fn(task, emit)` calls
 * planOnePolicy with its ports (tools/twin/plan.mjs), since ports cannot be sent to a thread.
 */
export interface PlanWorker {
  readonly module: string;
  readonly fn: string;
}

export interface PlanResult {
  readonly question: {
    readonly users: number;
    readonly model: string;
    readonly gpu: string;
    readonly slo: { readonly ttft_p99_ms: number; readonly tpot_mean_ms: number; readonly tpot_is_default: boolean };
    readonly policies: readonly PlanPolicy[];
  };
  /** By policy, in the question's order. */
  readonly plans: Readonly<Record<string, PolicyPlan>>;
  readonly search: {
    readonly twin_runs: number;
    readonly whole_cluster_runs: number;
    readonly [k: string]: unknown;
  };
  readonly cost_model: PlanCostModel;
  readonly workers: number;
  readonly wall_s: number;
}

export interface CapacityPlanOptions {
  readonly o?: PlanRunOptions;
  /** Hears each twin run as it ends. */
  readonly onRun?: (e: PlanRunEvent) => void;
  /** Hears each policy's plan as it is done. */
  readonly onPolicy?: (policy: PlanPolicy) => void;
  readonly now?: () => number;
  readonly workers?: number;
}

/**
 * The plan for each policy asked for, the policies on `workers` threads (run-pool.ts: each plan is
 * the same on any thread, only the wall time changes).
 */
export async function capacityPlan(
  q: PlanQuestion,
  worker: PlanWorker,
  { o = PLAN_RUN, onRun = () => {}, onPolicy = () => {}, now = () => performance.now(), workers }: CapacityPlanOptions = {},
): Promise<PlanResult> {
  const t0 = now();
  const { users, model, gpu, sloTpotMs, policies } = q;
  const slo = sloOf(q, o);
  const { start, max } = searchShape(q, o);
  const results = await runPool<PlanTask, PolicyPlan, PlanRunEvent>({
    module: worker.module,
    fn: worker.fn,
    tasks: policies.map((policy) => ({ q, policy, o })),
    onEvent: onRun,
    onDone: (i) => onPolicy(policies[i]),
    ...(workers ? { workers } : {}),
  });
  const plans: Record<string, PolicyPlan> = Object.fromEntries(policies.map((p, i) => [p, results[i]]));
  const all = Object.values(plans);
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
      instances:
        `doubling from ${start} (users ÷ ${o.usersPerInstanceStart}) up to ${max}, then bisecting, at the base memory point; ` +
        `a policy whose P99 TTFT falls less than ${o.floorGain * 100}% when its instances double is reported as unable to meet the SLO`,
      memory:
        'each other grid point, cheapest first, run once at the most instances at which it would still be cheaper than the best so far; ' +
        'bisected down only when it meets there',
      base: { host_gb_per_node: o.base.hostGb, ssd_tb_per_node: o.base.ssdTb },
      grid: { host_gb_per_node: o.hostGbGrid, ssd_tb_per_node: o.ssdTbGrid },
      run: {
        ...o,
        measured: `requests sent after ${o.warmMs / 1000} s of ${o.untilMs / 1000} simulated s`,
        cell:
          `clusters over ${o.cellInstances} instances run as a cell of ${o.cellInstances} ` +
          `(more where that leaves under ${o.minCellUsers} users) with its share of the users`,
      },
      twin_runs: all.reduce((a, p) => a + p.tried.filter((t) => t.ran && !t.reused).length, 0),
      verify:
        "the cells' answer run whole at its memory point; " +
        'where it misses, instances doubled on whole runs until one meets, then bisected; ' +
        'a policy is reported unable to meet the SLO where the SLO is under its ttft_floor_ms, ' +
        `where doubling cuts whole-cluster P99 TTFT by less than ${o.floorGain * 100}%, or at ${max} instances`,
      whole_cluster_runs: all.reduce((a, p) => a + (p.verification.runs?.length ?? 0), 0),
    },
    cost_model: costModel(),
    workers: Math.min(workers ?? poolWorkers(), policies.length),
    wall_s: tenths((now() - t0) / 1000),
  };
}
