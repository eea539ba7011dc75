// The peer link of the twin's calibration: pulls of a prompt's KV from another sim node-manager
// (gRPC FetchChunks layer streams, CRC checks, the layer-wise import, the restored chunks written
// to the puller's tiers), timed as the extra time to first token over the same request served on
// the node whose device still holds its prefix, on nodes whose compute and PCIe link cost nothing.
// (A fresh prompt of the same length is no baseline: it computes and exports every chunk, which a
// restore does not, and that export cost more than the pull on this machine.) It warms the gRPC
// channel with a pull first, and takes a low quantile (the 25th percentile) of the pulls and of
// their baselines apiece: delays from other work on a loaded machine only ever add, so the low
// quantiles are the link's own cost (contention is not part of it: docs/twin.md §Limits).
import { connect } from '@nats-io/transport-node';
import { chunkKeys, CHUNK_TOKENS } from '@mnemo/kv-core';
import { quantile } from '@mnemo/testkit';
import { launchSimNodes, ready, stop } from '../../bench/lib/services.mjs';
import { grpcAddresses } from '../../bench/lib/node-addresses.mjs';
import { inferOnNode } from '../../bench/lib/node-infer.mjs';

const TENANT = 'twin-calibrate';
const text = (n, salt) => Array.from({ length: n }, (_, i) => (i * 31 + salt * 977 + 3) % 250);
const LOW = 0.25;

/** Extra ms of a peer pull of `chunks` chunks (low quantiles of pulls and baselines), for each size in `sizes`. */
export async function measurePeerPulls({ natsUrl, model, nodeEnv, dataDir, sizes = [4, 16], reps = 9 }) {
  const zero = {
    NODE_SIM_PREFILL_TOKEN_US: '0',
    NODE_SIM_DECODE_STEP_MS: '0',
    NODE_SIM_DECODE_SEQ_US: '0',
    NODE_SIM_DECODE_KCONTEXT_US: '0',
    NODE_SIM_RESTORE_US_PER_CHUNK: '0',
  };
  const nodes = await launchSimNodes(
    { natsUrl, dataDir, model, env: { ...nodeEnv, ...zero } },
    ['a', 'b'].map((id) => ({ nodeId: `twin-calibrate-${id}`, blocks: 4096 })),
  );
  const nc = await connect({ servers: natsUrl });
  try {
    await Promise.all(nodes.map((n) => ready(n.port)));
    const ids = nodes.map((n) => n.nodeId);
    const addresses = await grpcAddresses(nc, ids);
    const [a, b] = ids;
    const infer = (nodeId, tokens, kvSources = []) =>
      inferOnNode(nc, nodeId, { model, tenant: TENANT, tokens, maxTokens: 1, kvSources, idPrefix: 'twin-calibration' });
    const pull = (held, tokens = held) =>
      infer(b, tokens, [{ nodeId: a, grpcAddress: addresses.get(a), chunkKeys: chunkKeys(model, TENANT, held) }]);
    // Warm-up: JIT on both nodes and the gRPC channel from b to a.
    const warm = text(2 * CHUNK_TOKENS + 32, 999);
    await infer(a, warm);
    await pull(warm);
    const out = {};
    let salt = 0;
    for (const chunks of sizes) {
      const length = chunks * CHUNK_TOKENS;
      const stayed = [];
      const pulls = [];
      for (let r = 0; r < reps; r++) {
        const p = text(length, ++salt);
        await infer(a, p);
        // The same request twice but for its last 32 tokens: pulled from a's tiers by b, and
        // served on a, whose device still holds the prefix. Only the restore tells them apart.
        const pulled = await pull(p, [...p, ...text(32, 20_000 + salt)]);
        if (pulled.cachedTokens < chunks * CHUNK_TOKENS)
          throw new Error(`peer calibration: ${chunks} chunks asked, ${pulled.cachedTokens} tokens restored`);
        pulls.push(pulled.ttftMs);
        const held = await infer(a, [...p, ...text(32, 30_000 + salt)]);
        if (held.cachedTokens < chunks * CHUNK_TOKENS)
          throw new Error(`peer calibration: the prefix left a's device (${held.cachedTokens} tokens cached)`);
        stayed.push(held.ttftMs);
      }
      out[chunks] = { ms: Math.max(0, quantile(pulls, LOW) - quantile(stayed, LOW)), pulls, bases: stayed };
    }
    return out;
  } finally {
    await nc.close();
    await Promise.all(nodes.map((n) => stop(n.child)));
  }
}
