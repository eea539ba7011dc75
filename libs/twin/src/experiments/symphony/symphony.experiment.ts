// Symphony's experiment (§4, Figs. 11, 15, 19, 20) on the twin at the paper's scale: 8 instances of
// Llama-3.1-8B on A100s in 2 nodes, closed-loop users on ShareGPT-like sessions, four serving systems
// from kv-core SERVING_SYSTEMS (symphony, vLLM-style recompute, InferCept-style sticky offload,
// llm-d-style load-aware prefix scoring) and symphony's advisory variants. Every cost comes from the
// hardware tables; nothing is fitted.
import { gpuCluster, SYMPHONY_HARDWARE, type GpuHardware } from '../../scenario/gpu-cluster.scenario.js';
import type { Progress } from '../../trace/trace.experiment.js';
import { cycleSessions } from '../shared/paper-workload.js';
import { paperRun, roundFigure as round, withoutRequests, type Curves } from '../shared/paper-run.js';
import { runPool } from '../shared/run-pool.js';
import { symphonyKeys, type SymphonyKeys } from './symphony.keys.js';
import type { SymphonyPorts, SymphonyRunSummary, SymphonyTask, SymphonyWorker } from './symphony.ports.js';
import { conductorSweepRuns, measuredUntilMs, SYMPHONY_RUN, symphonyRuns, type SymphonySetup } from './symphony.setup.js';

/** The conductor sweep's figures per threshold and the threshold every conductor run then uses. */
export interface ConductorSweep {
  readonly seed: number;
  readonly users: number;
  readonly rows: ReadonlyArray<{ readonly threshold: number; readonly ttft_mean_ms: number | null; readonly ttft_p99_ms: number | null }>;
  readonly best: number;
  readonly best_pct: number;
}

/** The experiment's curves (as written: no per-request TTFTs), its keys and its conductor sweep. */
export interface SymphonyResult {
  readonly curves: Curves<Omit<SymphonyRunSummary, 'ttft_by_request'>>;
  readonly keys: SymphonyKeys;
  readonly conductor_sweep: ConductorSweep | null;
  readonly wall_s: number | null;
}

/** Options of a whole experiment: the run's shape, the hardware (Symphony's testbed when absent), progress. */
export interface SymphonyExperimentOptions {
  readonly o?: SymphonySetup;
  readonly hw?: GpuHardware;
  /** Told before each run (on threads: as each run ends). */
  readonly progress?: Progress;
  readonly now?: () => number;
}

/** One run of the experiment: its summary and wall time (a worker thread's task too). */
export function symphonyRun(ports: SymphonyPorts, { r, o, hw }: SymphonyTask, now = () => performance.now()): SymphonyRunSummary {
  // The run's seed draws its sessions (seed 1: the workload's own draw). The cluster's own seed moves
  // nothing at this scale (its message hops are constant), so the conductor sweep's held-out seed and
  // the A/A pass would otherwise replay the very same run.
  const seed = r.seed ?? o.seed;
  const sessions = cycleSessions(ports.base(o.thinkCompression, seed), r.users * 40, ports.systemTokens);
  const config = gpuCluster(hw, r.system, {
    users: r.users,
    rampMs: o.rampMs,
    seed,
    tenant: `sym-${r.name}`,
    variant: r.variant,
    paperBaseline: r.paperBaseline,
    ...(r.conductorThreshold !== undefined ? { conductorThreshold: r.conductorThreshold } : {}),
  });
  const started = now();
  const summary = paperRun(config, sessions, { warmMs: o.warmMs, untilMs: r.untilMs ?? measuredUntilMs(o, r.users), byRequest: true });
  return { ...summary, wall_s: round((now() - started) / 1000, 1) };
}

/** The sweep's figures per threshold and the one with the lowest mean TTFT (null without a sweep). */
function pickThreshold(o: SymphonySetup, summaries: readonly SymphonyRunSummary[]): ConductorSweep | null {
  if (summaries.length === 0 || !o.conductorSweep) return null;
  const rows = o.conductorSweep.thresholds.map((t, i) => ({
    threshold: t,
    ttft_mean_ms: summaries[i].ttft_mean_ms,
    ttft_p99_ms: summaries[i].ttft_p99_ms,
  }));
  const best = rows.reduce((a, b) => ((b.ttft_mean_ms ?? Infinity) < (a.ttft_mean_ms ?? Infinity) ? b : a));
  return {
    seed: o.conductorSweep.seed,
    users: o.conductorSweep.users,
    rows,
    best: best.threshold,
    best_pct: Math.round(best.threshold * 100),
  };
}

/** Runs the whole experiment in this thread; `progress(i, n, label)` is told before each run. */
export function symphonyExperiment(
  ports: SymphonyPorts,
  { o = SYMPHONY_RUN, hw = SYMPHONY_HARDWARE, progress = () => {}, now = () => performance.now() }: SymphonyExperimentOptions = {},
): SymphonyResult {
  const t0 = now();
  const sweep = pickThreshold(
    o,
    conductorSweepRuns(o).map((r) => symphonyRun(ports, { r, o, hw }, now)),
  );
  const runs = symphonyRuns(o, sweep?.best);
  const curves: Curves<SymphonyRunSummary> = {};
  runs.forEach((r, i) => {
    progress(i, runs.length, `${r.name} @ ${r.users} users`);
    (curves[r.name] ??= {})[r.users] = symphonyRun(ports, { r, o, hw }, now);
  });
  progress(runs.length, runs.length, 'done');
  return { curves: withoutRequests(curves), keys: symphonyKeys(curves, o), conductor_sweep: sweep, wall_s: round((now() - t0) / 1000, 1) };
}

/**
 * The same experiment with its runs on `workers` threads (run-pool.ts), each importing `worker`,
 * the largest user counts first; the curves are the same run for run, only the wall time changes.
 * `progress(i, n, label)` is told as each run ends.
 */
export async function symphonyExperimentInWorkers(
  worker: SymphonyWorker,
  {
    o = SYMPHONY_RUN,
    hw = SYMPHONY_HARDWARE,
    progress = () => {},
    workers,
  }: Omit<SymphonyExperimentOptions, 'now'> & { workers?: number } = {},
): Promise<SymphonyResult> {
  const t0 = performance.now();
  const pool = (tasks: SymphonyTask[], more: { order?: number[]; onDone?: (i: number) => void } = {}) =>
    runPool<SymphonyTask, SymphonyRunSummary>({ ...worker, tasks, ...more, ...(workers ? { workers } : {}) });
  const sweepRuns = conductorSweepRuns(o);
  const sweep = pickThreshold(o, sweepRuns.length ? await pool(sweepRuns.map((r) => ({ r, o, hw }))) : []);
  const runs = symphonyRuns(o, sweep?.best);
  const order = runs.map((_, i) => i).sort((a, b) => runs[b].users - runs[a].users || a - b);
  let done = 0;
  const swept = sweep ? `conductor threshold ${sweep.best} (swept on seed ${sweep.seed}), ` : '';
  progress(0, runs.length, `${swept}${workers ?? 'default'} workers`);
  const results = await pool(
    runs.map((r) => ({ r, o, hw })),
    { order, onDone: (i) => progress(++done, runs.length, `${runs[i].name} @ ${runs[i].users} users`) },
  );
  const curves: Curves<SymphonyRunSummary> = {};
  runs.forEach((r, i) => ((curves[r.name] ??= {})[r.users] = results[i]));
  return {
    curves: withoutRequests(curves),
    keys: symphonyKeys(curves, o),
    conductor_sweep: sweep,
    wall_s: round((performance.now() - t0) / 1000, 1),
  };
}
