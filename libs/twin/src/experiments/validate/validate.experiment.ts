import { mean, median } from '@mnemo/kv-core';
import { summarizeRun, type RunSummary } from '../../report/run.summary.js';
import { multiroundCluster, type MeasuredCosts, type MultiroundSetup } from '../../scenario/multiround.scenario.js';
import { TwinCluster } from '../../scenario/twin.cluster.js';
import type { TwinSession } from '../../workload/session.workload.js';
import type { CalibrationFile, LiveRun } from './live-run.js';
import { configurations, live, mechanisms, round, servingSystem, type LiveConfiguration, type LiveFigures } from './validate.live.js';
import { measuredCosts, multiroundSetup, type MultiroundBench } from './validate.setup.js';
import { fitPeerLink } from './peer-link.fit.js';
import { fitRequestPath } from './request-path.fit.js';

/** What the twin leaves out, in words (docs/twin.md §Limits explains each). */
export const NOT_MODELLED = [
  'CPU contention between the processes: the live cluster runs 4 node-managers, a scheduler, NATS and the benchmark client on 2 shared ' +
    'cores (with other work beside them); the twin gives every process its own CPU, ' +
    'charging only the measured per-request and per-chunk CPU',
  'garbage collection pauses and JIT warm-up of the services',
  'the gateway (the benchmark talks to the scheduler over NATS directly, as the twin does)',
  'node deaths, dispatch timeouts, retries after a lost message, cancellations and deadlines (none happen in the benchmark)',
  'the layer stream cache, elastic borrowing between models, DroidSpeak cross-model reuse, swap preemption and priority scheduling ' +
    '(not used by the benchmark; recompute preemption is modelled)',
  'SSD journal syncs and compaction; SSD reads and writes share one queue per node only for reads',
  'the bytes themselves: KV content is not generated or verified (the live sim node regenerates and checks it; ' +
    'that CPU is in the calibrated restore and export costs)',
];

/** A live pass ran at the modelled speed when its TPOT p50 is within this factor of the twin's (no iteration waited for a core). */
export const UNCONTENDED_TPOT_RATIO = 1.1;

/** What the validation cannot import: the live run's sessions (testkit's generator) and the benchmark's own settings. */
export interface ValidatePorts {
  /** The sessions of a workload with these options over the generator's defaults: the live run's own. */
  readonly sessions: (options: object) => readonly TwinSession[];
  readonly bench: MultiroundBench;
}

export interface ValidateOptions {
  readonly mr: LiveRun;
  readonly cal: CalibrationFile;
  readonly seeds?: readonly number[];
  readonly log?: (line: string) => void;
  readonly now?: () => number;
  readonly liveFile?: string;
}

interface WaitedCheck {
  readonly label: string;
  readonly wait_per_iteration_ms: number | null;
  readonly ttft_p50_ms: number | null;
  readonly ttft_p99_ms: number | null;
  readonly tpot_p50_ms: number | null;
  readonly node_busy_share: RunSummary['node_busy_share'];
}

interface Ctx {
  readonly mr: LiveRun;
  readonly setup: MultiroundSetup;
  readonly costs: MeasuredCosts;
  readonly sessions: readonly TwinSession[];
  readonly log: (line: string) => void;
}

/**
 * Not the validation, and never a headline: a check of a traced cause. Where the live nodes'
 * decode steps took longer than the cost model prices them (live TPOT above the twin's), each
 * live iteration waited about the difference beyond its modelled time, for a core on a shared
 * machine. The twin is run once more with every node iteration (prefill and decode) waiting that
 * long: if it then lands near the live TTFTs, the waiting explains the gap; if not, something else
 * is missing too.
 */
function contentionCheck(x: Ctx, c: LiveConfiguration, twinTpot: number | null): WaitedCheck | null {
  const tpots = x.mr.passes.map((p) => p[c.name]?.tpot_p50_ms).filter((v): v is number => typeof v === 'number');
  if (tpots.length === 0 || twinTpot === null) return null;
  const waitMs = mean(tpots)! - twinTpot;
  if (!(waitMs > 1)) return null;
  const o = x.costs.overheads;
  const waiting = { ...x.costs, overheads: { ...o, prefillCpuMs: o.prefillCpuMs + waitMs, decodeCpuMs: o.decodeCpuMs + waitMs } };
  const cluster = new TwinCluster(
    multiroundCluster(x.setup, c.system, waiting, { seed: 1, tenant: `twin-${c.name}`, variant: c.variant }),
    x.sessions,
  );
  cluster.run();
  const r = summarizeRun(cluster);
  x.log(`twin ${c.name} with ${round(waitMs, 1)} ms of waiting per iteration: p50 ${r.ttft_p50_ms} ms, p99 ${r.ttft_p99_ms} ms`);
  return {
    label: 'diagnostic, not fitted into the validation: every node iteration waits (live TPOT p50 − twin TPOT p50)',
    wait_per_iteration_ms: round(waitMs, 1),
    ttft_p50_ms: r.ttft_p50_ms,
    ttft_p99_ms: r.ttft_p99_ms,
    tpot_p50_ms: r.tpot_p50_ms,
    node_busy_share: r.node_busy_share,
  };
}

/**
 * Each live pass against the twin: how much slower its decode steps were than the twin's (the
 * cost model's), and the twin's p50 error against that pass alone. TPOT, not TTFT, says whether
 * the pass's nodes ran at the modelled speed; only those passes compare like with like.
 */
function perPass(l: LiveFigures, twinP50: number, twinTpot: number | null) {
  return l.passes.map((p) => {
    const ratio = typeof p.tpot_p50_ms === 'number' && twinTpot ? p.tpot_p50_ms / twinTpot : null;
    return {
      load_average_before: p.load_average?.before ?? null,
      tpot_over_twin: round(ratio, 2),
      uncontended: ratio !== null && ratio <= UNCONTENDED_TPOT_RATIO,
      ttft_p50_error: round(Math.abs(twinP50 - p.ttft_p50_ms) / p.ttft_p50_ms)!,
    };
  });
}

/** One configuration: the twin over the seeds beside the live passes. */
function validateOne(x: Ctx, c: LiveConfiguration, seeds: readonly number[], now: () => number) {
  const runs = seeds.map((seed) => {
    const t0 = now();
    const cluster = new TwinCluster(
      multiroundCluster(x.setup, c.system, x.costs, { seed, tenant: `twin-${c.name}`, variant: c.variant }),
      x.sessions,
    );
    cluster.run();
    const s = { seed, ...summarizeRun(cluster), wall_s: round((now() - t0) / 1000, 1) };
    x.log(`twin ${c.name} seed ${seed}: p50 ${s.ttft_p50_ms} ms, p99 ${s.ttft_p99_ms} ms (${s.requests} requests, ${s.wall_s} s)`);
    return s;
  });
  const l = live(x.mr, c.name);
  const p50s = runs.map((r) => r.ttft_p50_ms);
  const p99s = runs.map((r) => r.ttft_p99_ms);
  const p50 = median(p50s)!;
  const p99 = median(p99s)!;
  const twinTpot = median(runs.map((r) => r.tpot_p50_ms));
  const range = (xs: ReadonlyArray<number | null>): [number, number] => [Math.min(...(xs as number[])), Math.max(...(xs as number[]))];
  return {
    live: l,
    twin: {
      ttft_p50_ms: round(p50, 2)!,
      ttft_p99_ms: round(p99, 2)!,
      ttft_p50_range_ms: range(p50s),
      ttft_p99_range_ms: range(p99s),
      runs,
    },
    ttft_p50_error: round(Math.abs(p50 - l.ttft_p50_mean_ms) / l.ttft_p50_mean_ms)!,
    ttft_p99_error: round(Math.abs(p99 - l.ttft_p99_mean_ms) / l.ttft_p99_mean_ms)!,
    ttft_p99_in_live_range: p99 >= l.ttft_p99_range_ms[0] && p99 <= l.ttft_p99_range_ms[1],
    mechanisms: mechanisms(x.mr, c.name, runs),
    per_pass: perPass(l, p50, twinTpot),
    twinTpot,
  };
}

export type SystemValidation = Omit<ReturnType<typeof validateOne>, 'twinTpot'> & { if_iterations_waited_as_live?: WaitedCheck };

const order = (entries: Array<[string, number]>) => entries.sort((a, b) => a[1] - b[1]).map(([k]) => k);

/**
 * The twin on the live multi-round run's workload, cluster and cost model, with the costs this
 * machine's calibration measured, against each configuration's live per-pass TTFTs.
 */
export function validateAgainstLive(ports: ValidatePorts, o: ValidateOptions) {
  const { mr, cal, seeds = [1, 2, 3], log = console.log, now = () => performance.now(), liveFile = 'bench/results/multiround.json' } = o;
  if (!Array.isArray(mr.passes) || mr.passes.length === 0)
    throw new Error('validate: bench/results/multiround.json has no per-pass figures (passes[]): run `npm run bench -- multiround` first');
  const sessions = ports.sessions(mr.workload?.options ?? {});
  const rampMs = (mr.workload?.users_start_over_s ?? 0) * 1000;
  const setup = multiroundSetup(mr, rampMs, ports.bench);
  // A reference-engine run's peer link comes from its calibration seed, as its compute port does.
  // Drawn once, for both fits below (and not at all for a sim run, which has no calibration seed).
  let drawn: ReturnType<typeof ports.sessions> | undefined;
  const calibrationSessions = () => (drawn ??= ports.sessions({ ...(mr.workload?.options ?? {}), seed: mr.engine_fit!.seed }));
  const fit = mr.engine_fit?.peer ? fitPeerLink(setup, measuredCosts(cal), calibrationSessions(), mr.engine_fit.peer, log) : undefined;
  // …and so does its request path outside the nodes, whose overheads the calibration file timed on an idle sim cluster.
  const liveOutside = mr.engine_fit?.calibration_run?.time_on_node?.outside_nodes_mean_ms;
  const path =
    mr.engine_fit && typeof liveOutside === 'number' && liveOutside > 0
      ? fitRequestPath(setup, fit?.costs ?? measuredCosts(cal), calibrationSessions(), liveOutside, log)
      : undefined;
  const x: Ctx = { mr, setup, costs: path?.costs ?? fit?.costs ?? measuredCosts(cal), sessions, log };
  const systems: Record<string, SystemValidation> = {};
  for (const c of configurations(mr)) {
    if (c.nodeEnv.NODE_PREFETCH_PROMOTE === 'off') continue; // the promotion A/B is not part of the validation
    const { twinTpot, ...v } = validateOne(x, c, seeds, now);
    const named = servingSystem(c.name);
    const check = named && !named.extra ? contentionCheck(x, c, twinTpot) : null;
    systems[c.name] = check ? { ...v, if_iterations_waited_as_live: check } : v;
  }
  const headline = Object.keys(systems).filter((k) => servingSystem(k)?.extra === false);
  const byLive = (metric: 'p50' | 'p99') =>
    order(headline.map((k) => [k, systems[k]!.live[metric === 'p50' ? 'ttft_p50_mean_ms' : 'ttft_p99_mean_ms']]));
  const byTwin = (metric: 'p50' | 'p99') =>
    order(headline.map((k) => [k, systems[k]!.twin[metric === 'p50' ? 'ttft_p50_ms' : 'ttft_p99_ms']]));
  const same = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((v, i) => v === b[i]);
  const orders = { live_p50: byLive('p50'), twin_p50: byTwin('p50'), live_p99: byLive('p99'), twin_p99: byTwin('p99') };
  // Pairs the twin orders unlike the live means, each with whether the live passes themselves
  // separated the two (ranges that overlap: the live run did not tell them apart).
  const disagreements = (metric: 'p50' | 'p99') => {
    const liveOrder = orders[`live_${metric}`];
    const twinOrder = orders[`twin_${metric}`];
    const key = metric === 'p50' ? 'ttft_p50_range_ms' : 'ttft_p99_range_ms';
    const out: Array<{ live_faster: string; live_slower: string; live_ranges_overlap: boolean }> = [];
    for (let i = 0; i < liveOrder.length; i++) {
      for (let j = i + 1; j < liveOrder.length; j++) {
        if (twinOrder.indexOf(liveOrder[i]!) < twinOrder.indexOf(liveOrder[j]!)) continue;
        const [a, b] = [systems[liveOrder[i]!]!.live[key], systems[liveOrder[j]!]!.live[key]];
        out.push({ live_faster: liveOrder[i]!, live_slower: liveOrder[j]!, live_ranges_overlap: a[1] >= b[0] && b[1] >= a[0] });
      }
    }
    return out;
  };
  const pick = <K extends keyof SystemValidation>(key: K) =>
    Object.fromEntries(Object.entries(systems).map(([k, v]) => [k, v[key]])) as Record<string, SystemValidation[K]>;
  const p50Errors = pick('ttft_p50_error');
  return {
    inputs: {
      live: { file: liveFile, date: mr.run?.date ?? null, passes: mr.passes.length, users: setup.users, nodes: setup.nodes },
      calibration: { file: 'bench/results/twin-calibration.json', date: cal.run?.date ?? null },
      // The reference-engine run's compute port: fitted on its calibration seed's steps, never on the passes compared here.
      ...(mr.engine_fit
        ? {
            compute: {
              fitted_on_seed: mr.engine_fit.seed,
              validated_on_seed: (mr.workload?.options as { seed?: number } | undefined)?.seed ?? null,
              cost: mr.engine_fit.cost,
            },
            ...(fit ? { peer_link: { fitted_on_seed: mr.engine_fit.seed, ...fit.report } } : {}),
            ...(path ? { request_path: { fitted_on_seed: mr.engine_fit.seed, ...path.report } } : {}),
          }
        : {}),
      workload: "libs/testkit/src/workloads/multiround.workload.ts workload(options) with the live run's options: the same sessions",
      seeds,
    },
    validation: {
      ttft_p50_error: p50Errors,
      ttft_p50_error_max: round(Math.max(...Object.values(p50Errors)))!,
      ttft_p50_error_target: 0.15,
      ttft_p99_error: pick('ttft_p99_error'),
      // The same error against only the passes that ran at the modelled speed (null: none did).
      ttft_p50_error_uncontended: Object.fromEntries(
        Object.entries(systems).map(([k, v]) => {
          const ok = v.per_pass.filter((p) => p.uncontended);
          return [k, ok.length ? Math.max(...ok.map((p) => p.ttft_p50_error)) : null];
        }),
      ),
      uncontended_passes: Object.fromEntries(Object.entries(systems).map(([k, v]) => [k, v.per_pass.filter((p) => p.uncontended).length])),
      uncontended_rule: `a live pass whose TPOT p50 is within ${UNCONTENDED_TPOT_RATIO}× the twin's: its nodes ran at the modelled speed`,
      ttft_p99_live_range_ms: Object.fromEntries(Object.entries(systems).map(([k, v]) => [k, v.live.ttft_p99_range_ms])),
      ttft_p99_twin_ms: Object.fromEntries(Object.entries(systems).map(([k, v]) => [k, v.twin.ttft_p99_ms])),
      ttft_p99_in_live_range: pick('ttft_p99_in_live_range'),
      policy_order_matches: same(orders.live_p50, orders.twin_p50) && same(orders.live_p99, orders.twin_p99),
      policy_order_p50_matches: same(orders.live_p50, orders.twin_p50),
      policy_order_p99_matches: same(orders.live_p99, orders.twin_p99),
      // Reported beside the strict key, never in its place: the twin against only the orders the live passes settled.
      policy_order_matches_where_live_separates: [...disagreements('p50'), ...disagreements('p99')].every((d) => d.live_ranges_overlap),
      order: orders,
      order_disagreements: { p50: disagreements('p50'), p99: disagreements('p99') },
      headline_systems: headline,
    },
    systems,
    not_modelled: NOT_MODELLED,
  };
}

export type Validation = ReturnType<typeof validateAgainstLive>;
