// Sim-engine nodes with KV bytes (NODE_SIM_KV_BYTES): a session moves from node A to node B and
// B pulls the prefix's real KV bytes from A over gRPC, layer by layer, through the same KV store
// and peer paths a reference node uses; the sim checks every restored layer against its tokens.
import { CHUNK_TOKENS, chunkKeys } from '@mnemo/kv-core';
import type { NodeManagerHandle } from '../../apps/node-manager/src/bootstrap/app.js';
import { simKvNodeEnv, clusterFor, scrape } from './cluster.js';
import { dispatch } from './direct-dispatch.js';

const MODEL = 'mnemo-tiny';
const LAYERS = 8;
const ROW = 16;
const CHUNK_BYTES = LAYERS * 2 * CHUNK_TOKENS * ROW * 4;
const turn1 = Array.from({ length: 600 }, (_, i) => 32 + ((i * 13 + 5) % 90));

describe('sim nodes with KV bytes: a session moves and its prefix is fetched from the peer', () => {
  const started = clusterFor({ nodes: 3, nodeEnv: simKvNodeEnv(MODEL, LAYERS, ROW) });
  let a: NodeManagerHandle;
  let b: NodeManagerHandle;
  let c: NodeManagerHandle;
  beforeAll(() => {
    [a, b, c] = started.nodes as [NodeManagerHandle, NodeManagerHandle, NodeManagerHandle];
  });

  it('turn 2 on node B restores the 512-token prefix from node A (real bytes, checked) and answers as a recompute', async () => {
    const first = await dispatch(started.cluster, a.nodeId, turn1);
    expect(first.tokens).toHaveLength(8);
    const turn2 = [...turn1, ...first.tokens, 40, 41, 42];
    const keys = chunkKeys(MODEL, 'itest', turn1);
    const moved = await dispatch(started.cluster, b.nodeId, turn2, [{ nodeId: a.nodeId, grpcAddress: a.grpcAddress, chunkKeys: keys }]);
    const recomputed = await dispatch(started.cluster, c.nodeId, turn2);
    expect(moved.error).toBeUndefined();
    expect(moved.done!.usage?.cachedTokens).toBe(512);
    expect(recomputed.done!.usage?.cachedTokens).toBe(0);
    expect(moved.tokens).toEqual(recomputed.tokens);
    expect(await scrape(b.metricsPort, 'mnemo_kv_peer_restored_tokens_total')).toBe(512);
    expect(await scrape(b.metricsPort, 'mnemo_kv_peer_restore_failures_total')).toBe(0);
    expect(await scrape(b.metricsPort, 'mnemo_kv_peer_fetch_bytes_total')).toBe(2 * CHUNK_BYTES);
    expect(await scrape(a.metricsPort, 'mnemo_kv_peer_served_bytes_total')).toBe(2 * CHUNK_BYTES);
  });

  it('a node with KV bytes writes its chunks through to its host pool, and a source that lacks them is a miss', async () => {
    const t = Array.from({ length: 300 }, (_, i) => 32 + ((i * 7 + 3) % 90));
    const viaEmpty = await dispatch(started.cluster, b.nodeId, t, [
      { nodeId: c.nodeId, grpcAddress: c.grpcAddress, chunkKeys: chunkKeys(MODEL, 'itest', t) },
    ]);
    expect(viaEmpty.error).toBeUndefined();
    expect(viaEmpty.done!.usage?.cachedTokens).toBe(0);
    expect(await scrape(a.metricsPort, 'mnemo_kv_written_bytes_total{tier="host"}')).toBeGreaterThanOrEqual(2 * CHUNK_BYTES);
  });
});
