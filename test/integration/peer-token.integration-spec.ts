// Issue 29 item 5: node ↔ node gRPC carries a shared token (NODE_PEER_TOKEN). Nodes that share
// it pull each other's KV; a caller without it gets nothing; a node that would serve KV beyond
// loopback without a token, or with a weak one, refuses to start.
import { CHUNK_TOKENS, chunkKeys } from '@mnemo/kv-core';
import { ConfigError } from '@mnemo/service-kit';
import { startNodeManager, type NodeManagerHandle } from '../../apps/node-manager/src/bootstrap/app.js';
import { ChunkPeerClient } from '../../apps/node-manager/src/peers/chunk-peer.client.js';
import { simKvNodeEnv, clusterFor, natsUrl, scrape } from './cluster.js';
import { dispatch } from './direct-dispatch.js';

const MODEL = 'mnemo-tiny';
const TOKEN = 'itest-peer-token-0123456789';
const LAYERS = 8;
const ROW = 16;
const SEGMENT_BYTES = 2 * CHUNK_TOKENS * ROW * 4;
const turn1 = Array.from({ length: 600 }, (_, i) => 32 + ((i * 19 + 7) % 90));

describe('node ↔ node gRPC with a shared token', () => {
  const started = clusterFor({ nodes: 2, nodeEnv: { ...simKvNodeEnv(MODEL, LAYERS, ROW), NODE_PEER_TOKEN: TOKEN } });
  let a: NodeManagerHandle;
  let b: NodeManagerHandle;
  beforeAll(() => {
    [a, b] = started.nodes as [NodeManagerHandle, NodeManagerHandle];
  });

  it("nodes sharing the token pull each other's KV; a caller without it, or with another, gets only misses", async () => {
    const first = await dispatch(started.cluster, a.nodeId, turn1);
    const turn2 = [...turn1, ...first.tokens, 40, 41];
    const keys = chunkKeys(MODEL, 'itest', turn1);
    const moved = await dispatch(started.cluster, b.nodeId, turn2, [{ nodeId: a.nodeId, grpcAddress: a.grpcAddress, chunkKeys: keys }]);
    expect(moved.done!.usage?.cachedTokens).toBe(512);
    expect(await scrape(b.metricsPort, 'mnemo_kv_peer_restored_tokens_total')).toBe(512);
    for (const token of [undefined, 'another-token-of-enough-length']) {
      const stranger = new ChunkPeerClient({ timeoutMs: 5_000, ...(token ? { token } : {}) });
      try {
        const got = [];
        for await (const c of stranger.fetch(a.grpcAddress, keys, 0, 1, SEGMENT_BYTES)) got.push(c.payload !== undefined);
        expect(got).toEqual([false, false]);
      } finally {
        stranger.close();
      }
    }
    const insider = new ChunkPeerClient({ timeoutMs: 5_000, token: TOKEN });
    try {
      const got = [];
      for await (const c of insider.fetch(a.grpcAddress, keys, 0, 1, SEGMENT_BYTES)) got.push(c.payload !== undefined);
      expect(got).toEqual([true, true]);
    } finally {
      insider.close();
    }
  });

  it.each<[string, Record<string, string>, RegExp]>([
    [
      'bound to every interface without a token',
      { NODE_GRPC_HOST: '0.0.0.0' },
      /NODE_PEER_TOKEN is required when NODE_GRPC_HOST="0\.0\.0\.0"/,
    ],
    ['with a short token', { NODE_PEER_TOKEN: 'sesame' }, /NODE_PEER_TOKEN=<secret>: must be at least 16 characters/],
  ])('a node %s refuses to start', async (_n, env, problem) => {
    const start = startNodeManager({
      NATS_URL: natsUrl(),
      METRICS_PORT: '0',
      LOG_LEVEL: 'error',
      NODE_ENGINE: 'sim',
      NODE_MODELS: MODEL,
      ...env,
    });
    await expect(start).rejects.toBeInstanceOf(ConfigError);
    await expect(start).rejects.toThrow(problem);
  });
});
