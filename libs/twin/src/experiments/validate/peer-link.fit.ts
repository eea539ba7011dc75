import { CHUNK_TOKENS, SERVING_SYSTEMS } from '@mnemo/kv-core';
import { summarizeRun } from '../../report/run.summary.js';
import { multiroundCluster, type MeasuredCosts, type MultiroundSetup } from '../../scenario/multiround.scenario.js';
import { TwinCluster } from '../../scenario/twin.cluster.js';
import type { TwinSession } from '../../workload/session.workload.js';
import { searchScale } from './scale.search.js';
import { round } from './validate.live.js';

/** What the calibration run's nodes measured of their peer pulls (bench multiround-engine, `engine_fit.peer`). */
export interface LivePeerPulls {
  /** Prompt tokens restored from peers over the run. */
  readonly restored_tokens: number;
  /** Time prefill passes waited on those pulls (mnemo_kv_peer_blocked_seconds_total), ms. */
  readonly blocked_ms: number;
}

export interface PeerLinkFit {
  readonly costs: MeasuredCosts;
  readonly report: {
    readonly live_blocked_ms_per_chunk: number | null;
    /** Null where the twin restored nothing from peers. */
    readonly twin_blocked_ms_per_chunk: number | null;
    /** Factor on the calibration file's peer link time (dispatch × it, bandwidth ÷ it). */
    readonly scale: number | null;
    readonly iterations: number;
    /** The twin's wait per chunk came within 3% of the live one (a link cannot make a pass wait less than nothing). */
    readonly converged: boolean;
    readonly how: string;
  };
}

const MAX_ITERATIONS = 10;
/** Close enough: the twin's wait per chunk within 3% of the live one. */
const TOLERANCE = 0.03;

const scaled = (c: MeasuredCosts, s: number): MeasuredCosts => ({
  ...c,
  links: { ...c.links, peer: { dispatchMs: c.links.peer.dispatchMs * s, bytesPerMs: c.links.peer.bytesPerMs / s } },
});

/** Symphony's restoring passes in the twin with these costs: ms waited per chunk restored from a peer (NaN: none restored). */
export function peerWaitPerChunk(setup: MultiroundSetup, costs: MeasuredCosts, sessions: readonly TwinSession[]): number {
  const cluster = new TwinCluster(
    multiroundCluster(setup, SERVING_SYSTEMS.symphony, costs, { seed: 1, tenant: 'twin-peer-link' }),
    sessions,
  );
  cluster.run();
  const r = summarizeRun(cluster);
  const chunks = r.restored_tokens.from_peers / CHUNK_TOKENS;
  // Tier loads in the same passes take well under a millisecond per chunk: the twin's wait is its peers'.
  return chunks > 0 ? r.blocked_ms / chunks : NaN;
}

/**
 * The peer link as the calibration run's nodes saw it. The calibration file times a pull of
 * 64 KiB chunks between idle sim nodes; a reference-engine node pulls 1 MiB chunks into its paged
 * cache while its own and its neighbours' compute hold the cores. So the twin replays the
 * calibration run (symphony, its sessions) and scales the link's time until a restoring pass
 * waits as long per peer chunk as the live nodes did. `sessions` and `live` must come from the
 * calibration seed: the validation's runs are never seen.
 */
export function fitPeerLink(
  setup: MultiroundSetup,
  costs: MeasuredCosts,
  sessions: readonly TwinSession[],
  live: LivePeerPulls,
  log: (line: string) => void = () => undefined,
): PeerLinkFit {
  if (!(live.restored_tokens > 0) || !(live.blocked_ms >= 0))
    throw new RangeError(`fitPeerLink: the calibration run restored nothing from peers (${live.restored_tokens} tokens)`);
  const target = live.blocked_ms / (live.restored_tokens / CHUNK_TOKENS);
  const waitPerChunk = (scale: number): number => {
    const perChunk = peerWaitPerChunk(setup, scaled(costs, scale), sessions);
    log(`peer link × ${scale.toFixed(3)}: ${perChunk.toFixed(1)} ms waited per peer chunk (live ${target.toFixed(1)})`);
    return perChunk;
  };
  // The wait does not follow the link exactly: a slower link also changes which turns symphony moves.
  const best = searchScale(target, waitPerChunk, { tolerance: TOLERANCE, maxIterations: MAX_ITERATIONS, min: 0.01, max: 100 });
  return {
    costs: scaled(costs, best.scale),
    report: {
      live_blocked_ms_per_chunk: round(target, 1),
      twin_blocked_ms_per_chunk: round(best.value, 1),
      scale: round(best.scale, 3),
      iterations: best.iterations,
      converged: best.converged,
      how:
        "the calibration file's peer link with its time scaled until the twin's symphony, replaying the calibration run's sessions, " +
        'waits as long per peer chunk as the live nodes did (mnemo_kv_peer_blocked_seconds_total over restored chunks)',
    },
  };
}
