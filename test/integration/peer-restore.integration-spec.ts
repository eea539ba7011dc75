// Symphony on the node: a session moving between nodes. Turn 1 runs on node A; turn 2 is sent
// to node B naming A in kv_sources, and B fetches the prefix over gRPC layer by layer instead of
// recomputing it. Greedy tokens equal those of a node that computed everything; a bad
// kv_sources entry is refused with invalid_request. Reference engine (CPU), real pools and NATS.
import { chunkKeys } from '@mnemo/kv-core';
import type { NodeManagerHandle } from '../../apps/node-manager/src/bootstrap/app.js';
import { clusterFor, scrape, referenceNodeEnv } from './cluster.js';
import { dispatch, type KvSourceInit } from './direct-dispatch.js';

const MODEL = 'mnemo-tiny';
const turn1 = Array.from({ length: 600 }, (_, i) => (i * 29 + 11) % 250);

describe('peer restore (a session moves between nodes)', () => {
  const started = clusterFor({ nodes: 3, nodeEnv: referenceNodeEnv(MODEL, 128) });
  let a: NodeManagerHandle;
  let b: NodeManagerHandle;
  let c: NodeManagerHandle;
  beforeAll(() => {
    [a, b, c] = started.nodes as [NodeManagerHandle, NodeManagerHandle, NodeManagerHandle];
  });

  const run = (node: NodeManagerHandle, tokens: number[], kvSources: KvSourceInit[] = []) =>
    dispatch(started.cluster, node.nodeId, tokens, kvSources);

  it('turn 2 on another node fetches the prefix from the first and answers exactly as a full recompute', async () => {
    const first = await run(a, turn1);
    const turn2 = [...turn1, ...first.tokens, 7, 8, 9];
    // A writes chunks through to its host pool right after the pass that completes them.
    const keys = chunkKeys(MODEL, 'itest', turn1);
    const moved = await run(b, turn2, [{ nodeId: a.nodeId, grpcAddress: a.grpcAddress, chunkKeys: keys }]);
    const recomputed = await run(c, turn2);
    expect(recomputed.done!.usage?.cachedTokens).toBe(0);
    expect(moved.done!.usage?.cachedTokens).toBe(512);
    expect(moved.tokens).toEqual(recomputed.tokens);
    expect(await scrape(b.metricsPort, 'mnemo_kv_peer_restored_tokens_total')).toBe(512);
    expect(await scrape(b.metricsPort, 'mnemo_kv_peer_fetch_bytes_total')).toBeGreaterThan(0);
    expect(await scrape(a.metricsPort, 'mnemo_kv_peer_served_bytes_total')).toBeGreaterThan(0);
  });

  it('a source that holds nothing is a miss: the node recomputes and answers the same', async () => {
    const t = Array.from({ length: 300 }, (_, i) => (i * 7 + 3) % 250);
    const keys = chunkKeys(MODEL, 'itest', t);
    const viaEmpty = await run(b, t, [{ nodeId: c.nodeId, grpcAddress: c.grpcAddress, chunkKeys: keys }]);
    const plain = await run(c, t);
    expect(viaEmpty.error).toBeUndefined();
    expect(viaEmpty.tokens).toEqual(plain.tokens);
  });

  it.each([
    ['an address that is not host:port', { nodeId: 'x', grpcAddress: 'not an address', chunkKeys: [] }],
    ['a malformed chunk key', { nodeId: 'x', grpcAddress: '127.0.0.1:1', chunkKeys: ['zz'] }],
  ])('refuses kv_sources with %s (invalid_request)', async (_n, source) => {
    const r = await run(b, turn1.slice(0, 20), [source]);
    expect(r.error).toBe('invalid_request');
  });
});
