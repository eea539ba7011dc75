// The twin's inputs from files: the calibration this machine measured (bench/results/twin-calibration.json)
// as cost ports, and the multi-round benchmark's cluster as its results file and bench/multiround record it.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_SIM_COST } from '@mnemo/engine';
import { DEFAULT_ROUTING_COSTS } from '@mnemo/kv-core';
import { Distribution } from '@mnemo/twin';
import { CLUSTER, DILATION, GPU, KV_BYTES_PER_TOKEN, KV_LAYOUT } from '../../bench/multiround/cluster.mjs';

export const CALIBRATION = 'bench/results/twin-calibration.json';

const link = (l) => ({ dispatchMs: l.dispatch_ms, bytesPerMs: l.bytes_per_ms ?? Infinity });

/** The calibration as the twin's cost ports. */
export function measuredCosts(cal) {
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
      // The node's time for a prefill and a decode step timed whole where the calibration has them (tools/twin/request-path.mjs), else its batch loop's CPU alone.
      prefillCpuMs: o.node_prefill_path_ms ?? o.prefill_cpu_ms ?? 0,
      prefillCpuMsPerKToken: o.node_prefill_path_ms_per_ktoken ?? o.prefill_cpu_ms_per_ktoken ?? 0,
      decodeCpuMs: o.node_decode_path_ms ?? o.decode_cpu_ms ?? 0,
      decodeCpuMsPerSeq: o.decode_cpu_ms_per_seq ?? 0,
      ...(Array.isArray(o.request_path_ms) && o.request_path_ms.length > 0 ? { requestPathMs: new Distribution(o.request_path_ms) } : {}),
    },
  };
}

export function readJson(root, path) {
  const p = join(root, path);
  return existsSync(p) ? JSON.parse(readFileSync(p, 'utf8')) : undefined;
}

const BYTES = { KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3 };
export function bytesOf(s) {
  const m = /^(\d+)(KiB|MiB|GiB)$/.exec(String(s));
  if (!m) throw new RangeError(`not a size: ${s}`);
  return Number(m[1]) * BYTES[m[2]];
}

/**
 * The live run's cluster: sizes and the nodes' cost model from bench/multiround/cluster.mjs (the
 * code the run used), the scheduler's per-chunk figures and users from the results file; a run on
 * the reference engine brings its own KV layout and its fitted compute port.
 */
export function multiroundSetup(mr, rampMs) {
  const c = { ...CLUSTER, ...(mr.cluster ?? {}) };
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
    prefillPerTokenMs: (GPU.prefillTokenUs * DILATION) / 1000,
    decodeBaseMs: GPU.decodeStepMs * DILATION,
    decodePerSeqMs: (GPU.decodeSeqUs * DILATION) / 1000,
    decodePerKContextMs: (GPU.decodeKContextUs * DILATION) / 1000,
    restorePerChunkMs: ((mr.cost_model?.pcie_restore_chunk_us ?? GPU.restoreChunkUs * DILATION) || 0) / 1000,
  };
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
    kvLayers: mr.kv_bytes?.layers ?? KV_LAYOUT.layers,
    kvBytesPerToken: mr.kv_bytes?.bytes_per_token ?? KV_BYTES_PER_TOKEN,
    compute,
    routing: {
      queueMsPerRequest: 20 * DILATION,
      moveMarginMs: 20 * DILATION,
      hostMsPerChunk: sched.host,
      ssdMsPerChunk: sched.ssd,
      peerMsPerChunk: sched.peer_network,
      ...(mr.cost_model?.scheduler?.conductor_threshold_pct?.pct
        ? { conductorThreshold: mr.cost_model.scheduler.conductor_threshold_pct.pct / 100 }
        : {}),
    },
    users: mr.env.users,
    rampMs,
  };
}
