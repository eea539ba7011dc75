// Measures what moving one 256-token chunk of a sim node's KV costs on this machine: a pull from a
// peer (its host-pool read, gRPC, CRC checks, the layer-wise import) and a restore from the local
// host pool, each as the extra time to first token of a prefill on a node whose compute costs
// nothing, over a baseline prompt of the same length that restores nothing. The multiround
// benchmark hands these measured figures to the scheduler's cost model.
import { connect } from '@nats-io/transport-node';
import { CHUNK_TOKENS, chunkKeys } from '@mnemo/kv-core';
import { median } from '@mnemo/testkit';
import { launchSimNodes, ready, stop } from './services.mjs';
import { grpcAddresses } from './node-addresses.mjs';
import { inferOnNode } from './node-infer.mjs';

const TENANT = 'calibrate';
const text = (n, salt) => Array.from({ length: n }, (_, i) => (i * 31 + salt * 977 + 3) % 250);

const infer = (nc, model, nodeId, tokens, kvSources = []) =>
  inferOnNode(nc, nodeId, { model, tenant: TENANT, tokens, maxTokens: 1, kvSources, idPrefix: 'calibration' });

/**
 * Per-chunk ms of a peer pull and of a host-pool restore, medians over `reps` prompts of `chunks`
 * chunks each, with the node environment `nodeEnv` (KV layout, pools) the benchmark's nodes use.
 */
export async function calibrateKvMoves({ natsUrl, model, nodeEnv, dataDir, chunks = 8, reps = 5 }) {
  const length = chunks * CHUNK_TOKENS + 32;
  // B's device holds one such prompt: the next one evicts it, so a repeat restores from B's host pool.
  const bBlocks = String((length >> 4) + 8);
  const zeroCost = {
    NODE_SIM_PREFILL_TOKEN_US: '0',
    NODE_SIM_DECODE_STEP_MS: '0',
    NODE_SIM_DECODE_SEQ_US: '0',
    NODE_SIM_DECODE_KCONTEXT_US: '0',
  };
  const nodes = await launchSimNodes({ natsUrl, dataDir, model, env: { ...nodeEnv, ...zeroCost } }, [
    { nodeId: 'calibrate-a', blocks: '2048' },
    { nodeId: 'calibrate-b', blocks: bBlocks },
  ]);
  const nc = await connect({ servers: natsUrl });
  try {
    await Promise.all(nodes.map((n) => ready(n.port)));
    const ids = nodes.map((n) => n.nodeId);
    const addresses = await grpcAddresses(nc, ids);
    const [a, b] = ids;
    await infer(nc, model, b, text(length, 999)); // warm-up: first gRPC connection, JIT
    const peer = [];
    const host = [];
    for (let r = 0; r < reps; r++) {
      const p = text(length, r);
      await infer(nc, model, a, p);
      const base = (await infer(nc, model, b, text(length, 100 + r))).ttftMs;
      const pulled = await infer(nc, model, b, p, [{ nodeId: a, grpcAddress: addresses.get(a), chunkKeys: chunkKeys(model, TENANT, p) }]);
      const base2 = (await infer(nc, model, b, text(length, 200 + r))).ttftMs; // evicts p from B's device
      const restored = await infer(nc, model, b, p);
      if (pulled.cachedTokens < chunks * CHUNK_TOKENS || restored.cachedTokens < (chunks - 1) * CHUNK_TOKENS) {
        throw new Error(
          `calibration: expected ${chunks} chunks restored, got ${pulled.cachedTokens} (peer) and ${restored.cachedTokens} (host) tokens`,
        );
      }
      peer.push(Math.max(0, pulled.ttftMs - base) / chunks);
      host.push(Math.max(0, restored.ttftMs - base2) / (restored.cachedTokens / CHUNK_TOKENS));
    }
    return { peerPullMsPerChunk: median(peer), hostLoadMsPerChunk: median(host), samples: { peer, host }, chunks, reps };
  } finally {
    await nc.close();
    await Promise.all(nodes.map((n) => stop(n.child)));
  }
}
