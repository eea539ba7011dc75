import { DEFAULT_SIM_COST } from '@mnemo/engine';
import { DEFAULT_ROUTING_COSTS } from '@mnemo/kv-core';
import { Distribution } from '../../core/distribution.js';
import type { TransferLink } from '../../costs/transfer.port.js';
import type { MeasuredCosts, MultiroundSetup } from '../../scenario/multiround.scenario.js';
import type { CalibrationFile, LiveCluster, LiveRun } from './live-run.js';

/**
 * What the sim benchmark's own code fixes and a results file may not record (bench/multiround/cluster.mjs):
 * its cluster, the undilated GPU cost model, the time dilation and the scaled KV layout.
 */
export interface MultiroundBench {
  readonly cluster: LiveCluster;
  readonly gpu: {
    readonly prefillTokenUs: number;
    readonly decodeStepMs: number;
    readonly decodeSeqUs: number;
    readonly decodeKContextUs: number;
    readonly restoreChunkUs: number;
  };
  readonly dilation: number;
  readonly kvLayers: number;
  readonly kvBytesPerToken: number;
}

const link = (l: { readonly dispatch_ms: number; readonly bytes_per_ms?: number }): TransferLink => ({
  dispatchMs: l.dispatch_ms,
  bytesPerMs: l.bytes_per_ms ?? Infinity,
});

/** The calibration as the twin's cost ports. */
export function measuredCosts(cal: CalibrationFile): MeasuredCosts {
  const o = cal.overheads;
  return {
    links: {
      hostLoad: link(cal.links.host_load),
      peer: link(cal.links.peer),
      ssdRead: link(cal.links.ssd_read),
      hostWrite: link(cal.links.host_write),
      ssdWrite: link(cal.links.ssd_write),
    },
    overheads: {
      natsMs: new Distribution(o.nats_ms),
      timerLagMs: new Distribution(o.timer_lag_ms),
      loopTurnMs: new Distribution(o.loop_turn_ms),
      clientMsPerKToken: o.client_ms_per_ktoken,
      scheduleMs: o.schedule_ms,
      admitMsPerKToken: o.admit_ms_per_ktoken,
      exportMsPerChunk: o.export_ms_per_chunk,
      // The node's time for a prefill and a decode step timed whole where the calibration has them
      // (tools/twin/request-path.mjs), else its batch loop's CPU alone.
      prefillCpuMs: o.node_prefill_path_ms ?? o.prefill_cpu_ms ?? 0,
      prefillCpuMsPerKToken: o.node_prefill_path_ms_per_ktoken ?? o.prefill_cpu_ms_per_ktoken ?? 0,
      decodeCpuMs: o.node_decode_path_ms ?? o.decode_cpu_ms ?? 0,
      decodeCpuMsPerSeq: o.decode_cpu_ms_per_seq ?? 0,
      ...(Array.isArray(o.request_path_ms) && o.request_path_ms.length > 0 ? { requestPathMs: new Distribution(o.request_path_ms) } : {}),
    },
  };
}

const BYTES: Readonly<Record<string, number>> = { KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3 };
/** `64MiB` → bytes. */
export function bytesOf(s: string): number {
  const m = /^(\d+)(KiB|MiB|GiB)$/.exec(String(s));
  if (!m) throw new RangeError(`not a size: ${s}`);
  return Number(m[1]) * BYTES[m[2]!]!;
}

/**
 * The live run's cluster: sizes and the nodes' cost model from the benchmark's code (`bench`, what
 * the run used), the scheduler's per-chunk figures and users from the results file; a run on the
 * reference engine brings its own KV layout and its fitted compute port.
 */
export function multiroundSetup(mr: LiveRun, rampMs: number, bench: MultiroundBench): MultiroundSetup {
  const c = { ...bench.cluster, ...(mr.cluster ?? {}) };
  const { gpu, dilation } = bench;
  // Runs before nodes measured their own costs handed the scheduler the calibration's figures; since then the
  // scheduler starts from kv-core's defaults and each node's heartbeats bring what it measured (so do the twin's nodes).
  const sched = mr.kv_bytes?.scheduler_costs_ms_per_chunk ?? {
    host: DEFAULT_ROUTING_COSTS.loadMsPerChunk.host,
    ssd: DEFAULT_ROUTING_COSTS.loadMsPerChunk.ssd,
    peer_network: DEFAULT_ROUTING_COSTS.peerMsPerChunk,
  };
  // A run on the reference engine (bench multiround-engine) carries its compute port, fitted on its calibration run's steps.
  const compute = mr.engine_fit?.cost ?? {
    ...DEFAULT_SIM_COST,
    prefillPerTokenMs: (gpu.prefillTokenUs * dilation) / 1000,
    decodeBaseMs: gpu.decodeStepMs * dilation,
    decodePerSeqMs: (gpu.decodeSeqUs * dilation) / 1000,
    decodePerKContextMs: (gpu.decodeKContextUs * dilation) / 1000,
    restorePerChunkMs: ((mr.cost_model?.pcie_restore_chunk_us ?? gpu.restoreChunkUs * dilation) || 0) / 1000,
  };
  const pct = mr.cost_model?.scheduler?.conductor_threshold_pct?.pct;
  return {
    nodes: c.nodes,
    model: c.model,
    kvBlocks: c.kvBlocks,
    maxBatch: c.maxBatch,
    maxContext: c.maxContext,
    hostPoolBytes: bytesOf(c.hostPool),
    ssdPoolBytes: bytesOf(c.ssdPool),
    heartbeatMs: c.heartbeatMs,
    bandwidths: { host: 10, ssd: 2 },
    kvLayers: mr.kv_bytes?.layers ?? bench.kvLayers,
    kvBytesPerToken: mr.kv_bytes?.bytes_per_token ?? bench.kvBytesPerToken,
    compute,
    routing: {
      queueMsPerRequest: 20 * dilation,
      moveMarginMs: 20 * dilation,
      hostMsPerChunk: sched.host,
      ssdMsPerChunk: sched.ssd,
      peerMsPerChunk: sched.peer_network,
      ...(pct ? { conductorThreshold: pct / 100 } : {}),
    },
    users: mr.env.users,
    rampMs,
  };
}
