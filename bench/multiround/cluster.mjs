// One configuration of the multi-round benchmark on a real cluster: a scheduler, sim node-managers
// and NATS as separate processes, users working through the sessions (think time, advisories when
// typing starts where the system has them), and what the processes counted. The cluster's
// hardware model and sizes are in `CLUSTER`; what differs between systems is in kv-core's
// SERVING_SYSTEMS and becomes node and scheduler environment here.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { cachedBlocksBetweenTurns } from '@mnemo/kv-core';
import {
  AdvisoryReplySchema,
  AdvisoryRequestSchema,
  decodeMessage,
  encodeMessage,
  HeartbeatSchema,
  Subjects,
  WhyReplySchema,
  WhyRequestSchema,
} from '@mnemo/proto';
import { counter, freePort, metricValue, percentile, round, waitForQuiet } from '@mnemo/testkit';
import { launch, ready, stop } from '../lib/services.mjs';
import { inferViaScheduler } from '../lib/scheduler-infer.mjs';

/** Time dilation: every modelled time (compute, PCIe, think) is this many times the real one. */
export const DILATION = 2;
/**
 * Llama-3.1-8B (bf16) on one H100 SXM (docs/symphony.md §2), undilated: prefill per token, the
 * decode step's parts, and the host → device copy of one 256-token chunk of its KV (32 MiB at
 * ≈ 24 GB/s over PCIe Gen5 x16: 1.4 ms), which every restore pays whatever tier it came from.
 */
export const GPU = { prefillTokenUs: 40, decodeStepMs: 6, decodeSeqUs: 50, decodeKContextUs: 38, restoreChunkUs: 1400 };
/**
 * KV bytes of the sim nodes: 8 layers × 2 (K, V) × 4 float32 = 256 B per token (64 KiB per chunk)
 * against Llama-3.1-8B's 32 × 2 × 8 × 128 × 2 B = 128 KiB: 512× fewer bytes and 4× fewer layers
 * (each layer is one gRPC stream of a peer restore). On two shared cores a chunk moves through
 * host pool → gRPC → CRC → import at a few MB/s and each stream costs a round trip of ~10 ms,
 * against 100 Gb/s in the modelled cluster; at this scale the measured cost of moving a chunk is
 * near the modelled ratio to recomputing it. Each node measures what it costs it (PassCosts) and reports it.
 */
export const KV_LAYOUT = { layers: 8, rowElems: 4 };
export const KV_BYTES_PER_TOKEN = KV_LAYOUT.layers * 2 * KV_LAYOUT.rowElems * 4;
export const REAL_KV_BYTES_PER_TOKEN = 32 * 2 * 8 * 128 * 2;
/** Sizes every system gets alike: nodes, device KV, batch, host pool, SSD pool (where the system has one). */
export const CLUSTER = {
  nodes: 4,
  model: 'mnemo-medium',
  kvBlocks: 2048,
  maxBatch: 16,
  maxContext: 16_384,
  hostPool: '64MiB',
  ssdPool: '128MiB',
  heartbeatMs: 200,
};

/** A sim node of CLUSTER running the dilated GPU model (what every system's nodes share). */
export function simNodeEnv() {
  return {
    NODE_ENGINE: 'sim',
    NODE_MODELS: CLUSTER.model,
    NODE_MAX_BATCH: String(CLUSTER.maxBatch),
    NODE_KV_BLOCKS: String(CLUSTER.kvBlocks),
    NODE_HEARTBEAT_MS: String(CLUSTER.heartbeatMs),
    NODE_SIM_PREFILL_TOKEN_US: String(GPU.prefillTokenUs * DILATION),
    NODE_SIM_DECODE_STEP_MS: String(GPU.decodeStepMs * DILATION),
    NODE_SIM_DECODE_SEQ_US: String(GPU.decodeSeqUs * DILATION),
    NODE_SIM_DECODE_KCONTEXT_US: String(GPU.decodeKContextUs * DILATION),
  };
}

/** Node environment of a system's KV store: the same host pool for all; an SSD pool where the system has one; fixed bandwidths so start-up measures nothing. */
export function kvEnv(dataDir, nodeId, system) {
  const ssd = system.tiers.includes('ssd');
  const cached = cachedBlocksBetweenTurns(system);
  return {
    NODE_SIM_KV_BYTES: `${KV_LAYOUT.layers}x${KV_LAYOUT.rowElems}`,
    NODE_SIM_MAX_CONTEXT: String(CLUSTER.maxContext),
    NODE_SIM_RESTORE_US_PER_CHUNK: String(GPU.restoreChunkUs * DILATION),
    NODE_DATA_DIR: join(dataDir, nodeId),
    NODE_KV_HOST_POOL: CLUSTER.hostPool,
    NODE_KV_SSD_POOLS: ssd ? `${join(dataDir, nodeId, 'ssd-0.pool')}=${CLUSTER.ssdPool}` : 'none',
    NODE_KV_BANDWIDTHS: ssd ? '10,2' : '10',
    ...(Number.isFinite(cached) ? { NODE_PREFIX_CACHE_BLOCKS: String(cached) } : {}),
  };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A node environment less the sim engine's settings (a reference node is refused them). */
const withoutSimKeys = (env) => Object.fromEntries(Object.entries(env).filter(([k]) => !k.startsWith('NODE_SIM_')));

/**
 * Runs the sessions on a fresh cluster under one configuration: `system` (a SERVING_SYSTEMS entry)
 * plus, for advisory variants, the share of advisories `missed` and of `spurious` ones. Users
 * start over `rampMs` and take sessions in order as they finish them. `engine` replaces the sim
 * nodes (bench/multiround-engine.bench.mjs: the reference engine on a trained model): its model,
 * context and each node's engine environment, which replaces simNodeEnv and the sim keys of kvEnv.
 */
export async function runConfig(
  name,
  { system, missed = 0, spurious = 0, nodeEnv = {}, schedulerEnv = {} },
  { natsUrl, sessions, benchDir, users, rampMs, conductorThresholdPct, engine },
) {
  const served = { model: engine?.model ?? CLUSTER.model, maxContext: engine?.maxContext ?? CLUSTER.maxContext };
  // A fresh data directory per run: a node would otherwise replay the SSD journal an earlier pass left under its id.
  const dataDir = mkdtempSync(join(benchDir, `${name}-`));
  const common = { NATS_URL: natsUrl, LOG_LEVEL: 'error', METRICS_HOST: '127.0.0.1' };
  const schedPort = await freePort();
  const scheduler = launch('scheduler', {
    ...common,
    METRICS_PORT: String(schedPort),
    SCHEDULER_POLICY: system.routing,
    SCHEDULER_PEER_FETCH: system.peerFetch ? 'on' : 'off',
    // The GPU an operator configures; what moving a chunk costs each node measures of itself and reports (SCHEDULER_MEASURED_COSTS).
    SCHEDULER_PREFILL_US_PER_TOKEN: String(GPU.prefillTokenUs * DILATION),
    SCHEDULER_QUEUE_MS_PER_REQUEST: String(20 * DILATION),
    SCHEDULER_MOVE_MARGIN_MS: String(20 * DILATION),
    ...(conductorThresholdPct ? { SCHEDULER_CONDUCTOR_THRESHOLD_PCT: String(conductorThresholdPct) } : {}),
    ...schedulerEnv,
    SCHEDULER_NODE_TIMEOUT_MS: '3000',
  });
  const nodes = [];
  for (let i = 0; i < CLUSTER.nodes; i++) {
    const port = await freePort();
    const nodeId = `mr-${name}-${i}`;
    nodes.push({
      nodeId,
      port,
      child: launch('node-manager', {
        ...common,
        METRICS_PORT: String(port),
        NODE_ID: nodeId,
        ...(engine ? withoutSimKeys(kvEnv(dataDir, nodeId, system)) : kvEnv(dataDir, nodeId, system)),
        ...(engine ? engine.nodeEnv(nodeId) : simNodeEnv()),
        ...nodeEnv,
      }),
    });
  }
  const nc = await connect({ servers: natsUrl });
  const load = new Map();
  let sampling = false;
  const hb = nc.subscribe(Subjects.HEARTBEAT, {
    callback: (_e, m) => {
      if (!sampling) return;
      const h = decodeMessage(HeartbeatSchema, m.data);
      const s = load.get(h.nodeId) ?? { sum: 0, n: 0 };
      s.sum += h.running + h.waiting;
      s.n++;
      load.set(h.nodeId, s);
    },
  });
  try {
    await Promise.all([ready(schedPort), ...nodes.map((n) => ready(n.port))]);
    await sleep(600); // every node heartbeated into the scheduler
    // Each run starts on a quiet machine: the previous run's teardown, this cluster's boot and whatever ran before the benchmark have settled.
    const quiet = await waitForQuiet();
    const tenant = `mr-${name}`;
    const results = [];
    const adv = { sent: 0, failed: 0, spurious: 0, missed: 0 };
    const finished = [];
    let next = 0;
    const loadBefore = os.loadavg()[0];
    sampling = true;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: users }, async (_, u) => {
        await sleep((u * rampMs) / users);
        for (let s = next++; s < sessions.length; s = next++) {
          results.push(
            ...(await converse(nc, tenant, sessions[s], { advisories: system.advisories, missed, spurious, adv, finished, served })),
          );
          finished.push(sessions[s].id);
        }
      }),
    );
    const wallS = (performance.now() - t0) / 1000;
    sampling = false;
    const schedMetrics = await (await fetch(`http://127.0.0.1:${schedPort}/metrics`)).text();
    // KV bytes pulled between nodes (peer restores and prefetches), where the nodes export those counters.
    let movedBytes = 0;
    const kv = {
      peerRestoredTokens: 0,
      tierRestoredTokens: 0,
      restoreFailures: 0,
      restoreFailuresBy: { local: 0, peer: 0, peer_stale: 0, peer_stale_partial: 0, peer_unreachable: 0, peer_pass: 0 },
      peerBlockedS: 0,
      prefetchedBytes: 0,
      promoted: { staged: 0, used: 0, purged: 0, unstaged: 0 },
    };
    // Where a request's time goes on its node (from arrival there): queued, and to its first token. The client's TTFT less these is the path outside the nodes.
    const onNode = { ttftSumS: 0, ttftCount: 0, queueSumS: 0, queueCount: 0 };
    const measuredCosts = {};
    for (const n of nodes) {
      const text = await (await fetch(`http://127.0.0.1:${n.port}/metrics`)).text();
      measuredCosts[n.nodeId] = Object.fromEntries(
        ['recompute', 'host', 'ssd', 'peer'].map((term) => [term, metricValue(text, 'mnemo_node_measured_cost_ms', { term }) ?? null]),
      );
      // Every verified pull, by a restore or an advisory prefetch (prefetch bytes are a part of it).
      movedBytes += counter(text, 'mnemo_kv_peer_fetch_bytes_total');
      kv.prefetchedBytes += counter(text, 'mnemo_kv_prefetch_bytes_total');
      kv.peerRestoredTokens += counter(text, 'mnemo_kv_peer_restored_tokens_total');
      kv.tierRestoredTokens += counter(text, 'mnemo_kv_hit_tokens_total');
      const failed = {
        local: counter(text, 'mnemo_kv_restore_failures_total'),
        peer: counter(text, 'mnemo_kv_peer_restore_failures_total'),
      };
      kv.restoreFailures += failed.local + failed.peer;
      kv.restoreFailuresBy.local += failed.local;
      kv.restoreFailuresBy.peer += failed.peer;
      for (const reason of ['stale', 'stale_partial', 'unreachable', 'pass'])
        kv.restoreFailuresBy[`peer_${reason}`] += metricValue(text, 'mnemo_kv_peer_restore_failures_by_reason_total', { reason }) ?? 0;
      kv.peerBlockedS += counter(text, 'mnemo_kv_peer_blocked_seconds_total');
      kv.promoted.staged += counter(text, 'mnemo_kv_prefetch_promoted_chunks_total');
      kv.promoted.used += counter(text, 'mnemo_kv_prefetch_promoted_used_total');
      kv.promoted.purged += counter(text, 'mnemo_kv_prefetch_promoted_purged_total');
      kv.promoted.unstaged += counter(text, 'mnemo_kv_prefetch_promoted_unstaged_total');
      onNode.ttftSumS += counter(text, 'mnemo_time_to_first_token_seconds_sum');
      onNode.ttftCount += counter(text, 'mnemo_time_to_first_token_seconds_count');
      onNode.queueSumS += counter(text, 'mnemo_node_queue_seconds_sum');
      onNode.queueCount += counter(text, 'mnemo_node_queue_seconds_count');
    }
    const loadAverage = { before: round(loadBefore, 1), after: round(os.loadavg()[0], 1), quiet };
    const tail = await explainTail(nc, tenant, results);
    return {
      tail,
      measuredCosts,
      results,
      wallS,
      load: [...load].map(([id, s]) => [id, s.sum / Math.max(1, s.n)]),
      adv,
      schedMetrics,
      movedBytes,
      kv,
      onNode,
      loadAverage,
    };
  } finally {
    hb.unsubscribe();
    await nc.close();
    await Promise.all([...nodes.map((n) => stop(n.child)), stop(scheduler)]);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * `why` for the requests at or past this run's TTFT p99, asked of the scheduler before the
 * cluster stops: the routing reason, the chosen node's estimate against the best other, and its
 * time on the node (arrival there to first token, as the node recorded it). Where the tail pays.
 */
export async function explainTail(nc, tenant, results) {
  const p99 = percentile(
    results.map((x) => x.ttftMs),
    99,
  );
  const out = [];
  for (const x of results.filter((r) => r.ttftMs >= p99)) {
    try {
      const payload = encodeMessage(WhyRequestSchema, { requestId: x.requestId, tenant });
      const reply = decodeMessage(WhyReplySchema, (await nc.request(Subjects.WHY, payload, { timeout: 5000 })).data);
      if (reply.result.case !== 'explanation') continue;
      const e = reply.result.value;
      const chosen = e.candidates.find((c) => c.nodeId === e.nodeId);
      const others = e.candidates.filter((c) => c.nodeId !== e.nodeId).map((c) => c.totalMs);
      const [arrived, first] = [Number(e.admittedUnixMs), Number(e.firstTokenUnixMs)];
      out.push({
        ttft_ms: round(x.ttftMs),
        prompt_tokens: x.promptTokens,
        cached_tokens: x.cachedTokens,
        reason: e.routeReason,
        estimate_ms: round(e.estimateMs),
        chosen_queue_ms: chosen ? round(chosen.queueMs) : null,
        best_other_ms: others.length ? round(Math.min(...others)) : null,
        on_node_ms: arrived > 0 && first >= arrived ? first - arrived : null,
      });
    } catch {
      // A record aged out or a scheduler busy: this request goes unexplained.
    }
  }
  return out;
}

/** One session: each turn's prompt is the whole history; between turns the user reads, then types (the advisory goes out when typing starts). */
async function converse(nc, tenant, session, o) {
  const out = [];
  let history = [...session.system, ...session.doc];
  for (const [t, turn] of session.turns.entries()) {
    const prompt = [...history, ...turn.user];
    if (prompt.length + turn.reply >= o.served.maxContext) break;
    if (t > 0) {
      await sleep(session.turns[t - 1].readMs);
      if (o.advisories) {
        // turn.r is drawn once per turn in the workload, so every run misses / adds the same ones.
        if (turn.r < o.missed) o.adv.missed++;
        else void advise(nc, tenant, session.id, turn.typeMs, o.adv, o.served.model);
        if (turn.r >= 1 - o.spurious && o.finished.length > 0) {
          // A spurious advisory: a session that has ended "starts typing" and never sends.
          o.adv.spurious++;
          void advise(nc, tenant, o.finished[Math.floor(turn.r * 7919) % o.finished.length], turn.typeMs, o.adv, o.served.model);
        }
      }
    }
    await sleep(turn.typeMs);
    const r = await infer(nc, `${tenant}-${session.id}-${t}`, tenant, session.id, prompt, turn.reply, o.served.model);
    out.push({ session: session.id, turn: t, promptTokens: prompt.length, ...r });
    history = [...prompt, ...r.tokens];
  }
  return out;
}

async function advise(nc, tenant, sessionId, typeMs, counts, model) {
  counts.sent++;
  try {
    const payload = encodeMessage(AdvisoryRequestSchema, {
      tenant,
      sessionId,
      model,
      expectedArrivalUnixMs: Date.now() + typeMs,
    });
    const reply = decodeMessage(AdvisoryReplySchema, (await nc.request(Subjects.ADVISE, payload, { timeout: 10_000 })).data);
    if (reply.result.case !== 'advisory') counts.failed++;
  } catch {
    counts.failed++;
  }
}

/** One request as the benchmark's users send it: to the scheduler over NATS, its tokens streamed back to an inbox. */
export async function infer(nc, requestId, tenant, sessionId, tokens, maxTokens, model = CLUSTER.model) {
  // Every reply runs to the length the workload drew (the sim engine samples no EOS; a trained model would).
  const r = await inferViaScheduler(nc, { requestId, tenant, sessionId, model, tokens, maxTokens, deadlineMs: 600_000, ignoreEos: true });
  const totalMs = performance.now() - r.t0;
  return {
    requestId: r.requestId,
    ttftMs: r.ttftMs,
    tpotMs: r.tokens.length > 1 ? (totalMs - r.ttftMs) / (r.tokens.length - 1) : null,
    cachedTokens: r.cachedTokens,
    tokens: r.tokens,
    node: r.node,
  };
}
