// The request path of the twin's calibration: a real scheduler and one sim node-manager whose
// compute and PCIe link cost nothing, on an otherwise idle cluster, sent fresh prompts one at a
// time the way the multi-round benchmark's users send them (bench/multiround/cluster.mjs `infer`).
// Each request's time to first token is split at the node by the node's own counters: the node's
// part (mnemo_time_to_first_token_seconds: arrival there to the first token) and the path outside
// it (client, NATS hops, the scheduler, the dispatch's decode and admission, the token event back).
// The pieces the twin used to add up for these paths (a hop between two connections of one idle
// process, the scheduler's and client's CPU, the batch loop's CPU) leave out what happens between
// them: processes woken by each message, handlers, microtask flushes. Timing the paths whole takes
// it in; none of it is the validated workload's TTFT. The fits of these samples are libs/twin's
// (costs/request-path.fit.ts).
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { counter, freePort } from '@mnemo/testkit';
import { launch, ready, stop } from '../../bench/lib/services.mjs';
import { CLUSTER, infer } from '../../bench/multiround/cluster.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const text = (n, salt) => Array.from({ length: n }, (_, i) => (i * 29 + salt * 613 + 5) % 250);
/** Prompt sizes: under one chunk (nothing exported before the first token) to four chunks. */
export const PATH_SIZES = [16, 64, 256, 1024];
const ZERO_COST = {
  NODE_SIM_PREFILL_TOKEN_US: '0',
  NODE_SIM_DECODE_STEP_MS: '0',
  NODE_SIM_DECODE_SEQ_US: '0',
  NODE_SIM_DECODE_KCONTEXT_US: '0',
  NODE_SIM_RESTORE_US_PER_CHUNK: '0',
};

/**
 * Per request: the client's TTFT, the node's part of it and the client's time per output token;
 * `reps` prompts of each size in turn on each of `clusters` fresh clusters, pooled. The path
 * differs from one start of the processes to the next by more than within one (where the
 * processes land on the cores, what their first minutes compiled), and the live benchmark starts
 * fresh ones for every pass: one cluster would be one draw of that. `nodeEnv(nodeId)`: the node's
 * KV environment (its own data directory and pools).
 */
export async function measureRequestPath({ natsUrl, nodeEnv, dataDir, clusters = 3, reps = 20, maxTokens = 16, log = () => undefined }) {
  const pooled = { outside: [], tpot: [], node: Object.fromEntries(PATH_SIZES.map((s) => [s, []])) };
  for (let c = 0; c < clusters; c++) {
    const m = await onFreshCluster({ natsUrl, nodeEnv, dataDir, id: `twin-calibrate-path-${c}`, reps, maxTokens });
    pooled.outside.push(...m.outside);
    pooled.tpot.push(...m.tpot);
    for (const s of PATH_SIZES) pooled.node[s].push(...m.node[s]);
    log(`request path: cluster ${c + 1} of ${clusters}`);
  }
  return pooled;
}

async function onFreshCluster({ natsUrl, nodeEnv, dataDir, id, reps, maxTokens }) {
  const common = { NATS_URL: natsUrl, LOG_LEVEL: 'error', METRICS_HOST: '127.0.0.1' };
  const schedPort = await freePort();
  const scheduler = launch('scheduler', { ...common, METRICS_PORT: String(schedPort), SCHEDULER_POLICY: 'symphony' });
  const nodePort = await freePort();
  const node = launch('node-manager', {
    ...nodeEnv(id),
    ...ZERO_COST,
    ...common,
    METRICS_PORT: String(nodePort),
    NODE_ID: id,
    NODE_ENGINE: 'sim',
    NODE_MODELS: CLUSTER.model,
    NODE_MAX_BATCH: String(CLUSTER.maxBatch),
    NODE_KV_BLOCKS: String(CLUSTER.kvBlocks),
    NODE_HEARTBEAT_MS: String(CLUSTER.heartbeatMs),
    NODE_DATA_DIR: join(dataDir, id),
  });
  const nc = await connect({ servers: natsUrl });
  const onNode = async () =>
    counter(await (await fetch(`http://127.0.0.1:${nodePort}/metrics`)).text(), 'mnemo_time_to_first_token_seconds_sum') * 1000;
  try {
    await Promise.all([ready(schedPort), ready(nodePort)]);
    await sleep(600); // the node heartbeated into the scheduler
    const outside = [];
    const tpot = [];
    const onNodeMs = Object.fromEntries(PATH_SIZES.map((s) => [s, []]));
    // Two warm-up rounds (JIT, first connections) are not kept.
    for (let r = -2; r < reps; r++) {
      for (const [i, size] of PATH_SIZES.entries()) {
        const before = await onNode();
        const res = await infer(nc, `${id}-${r}-${i}`, 'twin-calibrate', `${id}-${r}-${i}`, text(size, (r + 2) * 7 + i + 3), maxTokens);
        await sleep(20); // the node's counters settle; the next request meets an idle cluster
        const nodeMs = (await onNode()) - before;
        if (r < 0) continue;
        outside.push(res.ttftMs - nodeMs);
        if (res.tpotMs !== null) tpot.push(res.tpotMs);
        onNodeMs[size].push(nodeMs);
      }
    }
    return { outside, node: onNodeMs, tpot };
  } finally {
    await nc.close();
    await Promise.all([stop(node), stop(scheduler)]);
  }
}
