// `npm run twin -- scale`: one simulated hour of 1,024 users on 8 instances, timed on this machine.
// The cluster is the multi-round benchmark's at its modelled scale: Llama-3.1-8B on H100s at full
// speed (no dilation), human think times (no compression), full-size KV bytes, and published link
// figures (labelled) instead of this machine's; symphony routing with advisories.
import { SERVING_SYSTEMS } from '@mnemo/kv-core';
import { DEFAULT_SIM_COST } from '@mnemo/engine';
import { Distribution, multiroundCluster, NO_OVERHEADS, summarizeRun, TwinCluster } from '@mnemo/twin';
import { GPU, REAL_KV_BYTES_PER_TOKEN } from '../../bench/multiround/cluster.mjs';
import { DEFAULT_WORKLOAD, workload } from '@mnemo/testkit';

const HOUR_MS = 3_600_000;
const GiB = 1024 ** 3;

/**
 * Published figures for the modelled hardware (labelled: not measured here): PCIe Gen5 x16 at
 * ≈ 24 GB/s for host ↔ device (the GPU constants' 1.4 ms per 32 MiB chunk), 100 Gb/s between
 * nodes, an NVMe SSD at ≈ 3 GB/s reads and 2 GB/s writes, ≈ 10 µs per call.
 */
const LINKS = {
  hostLoad: { dispatchMs: 0.01, bytesPerMs: 24e6 },
  hostWrite: { dispatchMs: 0.01, bytesPerMs: 24e6 },
  peer: { dispatchMs: 0.05, bytesPerMs: 12.5e6 },
  ssdRead: { dispatchMs: 0.01, bytesPerMs: 3e6 },
  ssdWrite: { dispatchMs: 0.01, bytesPerMs: 2e6 },
};

export function scaleSetup({ users = 1024, nodes = 8 } = {}) {
  const options = { ...DEFAULT_WORKLOAD, sessions: Math.ceil(users * 12), dilation: 1, thinkCompression: 1 };
  const sessions = workload(options);
  const rampMs = 300_000;
  return {
    sessions,
    options,
    setup: {
      nodes,
      model: 'mnemo-medium',
      kvBlocks: 16_384,
      maxBatch: 64,
      maxContext: 16_384,
      hostPoolBytes: 256 * GiB,
      ssdPoolBytes: 1024 * GiB,
      heartbeatMs: 1000,
      bandwidths: { host: 24, ssd: 3 },
      kvLayers: 32,
      kvBytesPerToken: REAL_KV_BYTES_PER_TOKEN,
      compute: {
        ...DEFAULT_SIM_COST,
        prefillBaseMs: 0.5,
        prefillPerTokenMs: GPU.prefillTokenUs / 1000,
        decodeBaseMs: GPU.decodeStepMs,
        decodePerSeqMs: GPU.decodeSeqUs / 1000,
        decodePerKContextMs: GPU.decodeKContextUs / 1000,
        restorePerChunkMs: GPU.restoreChunkUs / 1000,
      },
      routing: { queueMsPerRequest: 20, moveMarginMs: 20, hostMsPerChunk: 1.4, ssdMsPerChunk: 5.5, peerMsPerChunk: 2.7 },
      users,
      rampMs,
    },
  };
}

export function scale({ log = console.log, now = () => performance.now(), users = 1024, nodes = 8, hours = 1 } = {}) {
  const { sessions, setup, options } = scaleSetup({ users, nodes });
  const overheads = { ...NO_OVERHEADS, natsMs: Distribution.constant(0.1), timerLagMs: Distribution.constant(0) };
  const cluster = new TwinCluster(
    multiroundCluster(setup, SERVING_SYSTEMS.symphony, { links: LINKS, overheads }, { seed: 1, tenant: 'scale', untilMs: hours * HOUR_MS }),
    sessions,
  );
  log(`scale: ${users} users on ${nodes} instances, ${hours} simulated hour(s)…`);
  const t0 = now();
  const cpu0 = process.cpuUsage();
  const ended = cluster.run();
  const wallS = (now() - t0) / 1000;
  // The process's own CPU beside the wall time: on a shared machine the difference is waiting for a core.
  const cpu = process.cpuUsage(cpu0);
  const s = summarizeRun(cluster);
  return {
    sim_hour_1024_users_s: users === 1024 && nodes === 8 && hours === 1 ? Math.round(wallS * 10) / 10 : null,
    target_s: 600,
    wall_s: Math.round(wallS * 10) / 10,
    cpu_s: Math.round((cpu.user + cpu.system) / 1e5) / 10,
    simulated_s: Math.round(ended / 100) / 10,
    users,
    instances: nodes,
    requests: s.requests,
    events: s.events,
    events_per_wall_s: Math.round(s.events / wallS),
    ttft_p50_ms: s.ttft_p50_ms,
    ttft_p99_ms: s.ttft_p99_ms,
    prefix_hit_rate: s.prefix_hit_rate,
    node_busy_share: s.node_busy_share,
    setup:
      'symphony with advisories; Llama-3.1-8B on H100 at full speed (bench/multiround GPU constants undilated), 16,384 KV blocks and batch 64 per instance, heartbeats every second (the services’ default), 256 GiB host and 1 TiB SSD pools, full-size KV bytes (128 KiB per token, 32 layers), human think times (no compression), links from published figures (PCIe Gen5, 100 Gb/s, NVMe), no service overheads',
    workload: {
      generator: 'libs/testkit/src/workloads/multiround.workload.ts',
      sessions: sessions.length,
      think_compression: options.thinkCompression,
      dilation: options.dilation,
    },
  };
}
