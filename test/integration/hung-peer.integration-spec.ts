// Issue 29 item 2: a hung peer is a miss, not a stall. A real gRPC server takes node B's chunk
// fetch and never answers (a stopped process looks the same). B's prefill waits one chunk
// deadline (size over the measured link speed, plus NODE_PEER_DEADLINE_BASE_MS), far short of the
// stream's NODE_PEER_TIMEOUT_MS; the pass goes on for the request batched with it, and the hung
// one recomputes — the same tokens as a node that never had a source.
import { Server, ServerCredentials, type ServerWritableStream } from '@grpc/grpc-js';
import { chunkKeys } from '@mnemo/kv-core';
import { loadGrpcServices } from '@mnemo/proto';
import type { NodeManagerHandle } from '../../apps/node-manager/src/bootstrap/app.js';
import { simKvNodeEnv, Cluster, scrape } from './cluster.js';
import { dispatch } from './direct-dispatch.js';

const MODEL = 'mnemo-tiny';
const PEER_TIMEOUT_MS = 30_000;
const prompt = Array.from({ length: 600 }, (_, i) => 32 + ((i * 11 + 3) % 90));
const other = Array.from({ length: 300 }, (_, i) => 40 + ((i * 5 + 1) % 80));

describe('a peer that hangs mid-fetch', () => {
  let cluster: Cluster;
  let b: NodeManagerHandle;
  let clean: NodeManagerHandle;
  let server: Server;
  let hungAddress: string;
  const calls: Array<ServerWritableStream<unknown, unknown>> = [];

  beforeAll(async () => {
    server = new Server();
    server.addService(loadGrpcServices().ChunkTransfer, {
      FetchChunks: (call: ServerWritableStream<unknown, unknown>) => void calls.push(call),
    });
    const port = await new Promise<number>((res, rej) =>
      server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, p) => (e ? rej(e) : res(p))),
    );
    hungAddress = `127.0.0.1:${port}`;
    cluster = await Cluster.start({
      nodes: 2,
      nodeEnv: {
        ...simKvNodeEnv(MODEL, 8, 16),
        NODE_PEER_TIMEOUT_MS: String(PEER_TIMEOUT_MS),
        NODE_PEER_DEADLINE_BASE_MS: '500',
      },
    });
    [b, clean] = cluster.nodes as [NodeManagerHandle, NodeManagerHandle];
  });
  afterAll(async () => {
    server?.forceShutdown();
    await cluster?.stop();
  });

  it(
    'costs one chunk deadline, not the stream timeout: the batched ' + 'request is served, the hung one recomputes the same tokens',
    async () => {
      const started = Date.now();
      const [viaHung, plain] = await Promise.all([
        dispatch(cluster, b.nodeId, prompt, [{ nodeId: 'hung', grpcAddress: hungAddress, chunkKeys: chunkKeys(MODEL, 'itest', prompt) }]),
        dispatch(cluster, b.nodeId, other),
      ]);
      const tookMs = Date.now() - started;
      expect(calls.length).toBeGreaterThan(0);
      expect(viaHung.error).toBeUndefined();
      expect(plain.error).toBeUndefined();
      expect(viaHung.done!.usage?.cachedTokens).toBe(0);
      // Past the stream timeout the hung request could only have been served by recomputing after it; this is well short of it.
      expect(tookMs).toBeLessThan(PEER_TIMEOUT_MS / 2);
      const [recomputed, plainElsewhere] = [await dispatch(cluster, clean.nodeId, prompt), await dispatch(cluster, clean.nodeId, other)];
      expect(viaHung.tokens).toEqual(recomputed.tokens);
      expect(plain.tokens).toEqual(plainElsewhere.tokens);
      expect(await scrape(b.metricsPort, 'mnemo_kv_peer_fetch_deadlines_total')).toBeGreaterThanOrEqual(1);
      expect(await scrape(b.metricsPort, 'mnemo_kv_peer_restore_failures_total')).toBe(1);
      expect(await scrape(b.metricsPort, 'mnemo_node_restore_fallbacks_total')).toBe(1);
    },
  );

  it('leaves the hung source out afterwards: the next request naming it recomputes at once', async () => {
    const t = Array.from({ length: 560 }, (_, i) => 35 + ((i * 17 + 2) % 85));
    const fetches = calls.length;
    const started = Date.now();
    const again = await dispatch(cluster, b.nodeId, t, [
      { nodeId: 'hung', grpcAddress: hungAddress, chunkKeys: chunkKeys(MODEL, 'itest', t) },
    ]);
    expect(again.error).toBeUndefined();
    expect(again.done!.usage?.cachedTokens).toBe(0);
    // No new fetch went to the hung peer, so no deadline was waited for.
    expect(calls.length).toBe(fetches);
    expect(await scrape(b.metricsPort, 'mnemo_node_restore_fallbacks_total')).toBe(1);
    expect(Date.now() - started).toBeLessThan(PEER_TIMEOUT_MS / 2);
  });
});
