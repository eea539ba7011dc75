import { SERVING_SYSTEMS } from '@mnemo/kv-core';
import { Distribution } from '../../core/distribution.js';
import { summarizeRun } from '../../report/run.summary.js';
import { multiroundCluster, type MeasuredCosts, type MultiroundSetup } from '../../scenario/multiround.scenario.js';
import { TwinCluster } from '../../scenario/twin.cluster.js';
import type { TwinSession } from '../../workload/session.workload.js';
import { searchScale } from './scale.search.js';
import { round } from './validate.live.js';

export interface RequestPathFit {
  readonly costs: MeasuredCosts;
  readonly report: {
    /** The calibration run's mean TTFT outside the nodes (client TTFT less the nodes' own), ms. */
    readonly live_outside_nodes_mean_ms: number;
    readonly twin_outside_nodes_mean_ms: number | null;
    /** Factor on the calibration file's request-path overheads (hops, scheduler, client, the path timed whole). */
    readonly scale: number;
    readonly iterations: number;
    /** The twin's outside time came within 3% of the live one. */
    readonly converged: boolean;
    readonly how: string;
  };
}

const MAX_ITERATIONS = 10;
const TOLERANCE = 0.03;
/** A contended path is slower, never faster, than ten times the idle one; past that the inputs are wrong. */
const MAX_SCALE = 10;

const scaleDist = (d: Distribution, s: number): Distribution => new Distribution(d.samples().map((x) => x * s));

/** The overheads a request pays outside the nodes, scaled by `s`; the nodes' own CPU and the links stay. */
export function scaledRequestPath(c: MeasuredCosts, s: number): MeasuredCosts {
  const o = c.overheads;
  return {
    ...c,
    overheads: {
      ...o,
      natsMs: scaleDist(o.natsMs, s),
      clientMsPerKToken: o.clientMsPerKToken * s,
      scheduleMs: o.scheduleMs * s,
      ...(o.requestPathMs ? { requestPathMs: scaleDist(o.requestPathMs, s) } : {}),
    },
  };
}

/** The twin's symphony on `sessions` with these costs: mean TTFT outside the nodes, ms (NaN: nothing measured). */
export function outsideNodesMeanMs(setup: MultiroundSetup, costs: MeasuredCosts, sessions: readonly TwinSession[]): number {
  const cluster = new TwinCluster(
    multiroundCluster(setup, SERVING_SYSTEMS.symphony, costs, { seed: 1, tenant: 'twin-request-path' }),
    sessions,
  );
  cluster.run();
  return summarizeRun(cluster).time_on_node.outside_nodes_mean_ms ?? NaN;
}

/**
 * The request's path outside the nodes as the calibration run saw it. The calibration file times
 * hops, the scheduler and the whole path on an idle sim cluster; on the reference engine the
 * gateway, the scheduler and NATS share two cores with four nodes' compute, so each takes longer.
 * The twin replays the calibration run (symphony, its sessions) and scales those overheads until a
 * request spends as long outside the nodes as the live calibration run's did (its client TTFT less
 * the nodes' own first-token time, both means). `sessions` and `liveOutsideMs` must come from the
 * calibration seed: the validation's runs are never seen.
 */
export function fitRequestPath(
  setup: MultiroundSetup,
  costs: MeasuredCosts,
  sessions: readonly TwinSession[],
  liveOutsideMs: number,
  log: (line: string) => void = () => undefined,
): RequestPathFit {
  if (!(liveOutsideMs > 0)) throw new RangeError(`fitRequestPath: the calibration run's time outside the nodes is ${liveOutsideMs} ms`);
  const at = (scale: number): number => {
    const ms = outsideNodesMeanMs(setup, scaledRequestPath(costs, scale), sessions);
    log(`request path × ${scale.toFixed(3)}: ${ms.toFixed(2)} ms outside the nodes (live ${liveOutsideMs.toFixed(2)})`);
    return ms;
  };
  const best = searchScale(liveOutsideMs, at, { tolerance: TOLERANCE, maxIterations: MAX_ITERATIONS, min: 0.1, max: MAX_SCALE });
  return {
    costs: scaledRequestPath(costs, best.scale),
    report: {
      live_outside_nodes_mean_ms: round(liveOutsideMs, 2)!,
      twin_outside_nodes_mean_ms: round(best.value, 2),
      scale: round(best.scale, 3)!,
      iterations: best.iterations,
      converged: best.converged,
      how:
        "the calibration file's request-path overheads (NATS hops, scheduler, client, the path timed whole) scaled until the " +
        "twin's symphony, replaying the calibration run's sessions, spends as long outside the nodes per request as the live " +
        'calibration run did (its mean client TTFT less the nodes’ own)',
    },
  };
}
