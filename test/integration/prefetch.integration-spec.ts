// Symphony on the node, done-when "an advisory causes a prefetch on the chosen node and the
// inference lands there and finds its KV on host or device": a PrefetchRequest over NATS makes
// node B pull a session's chunks from node A into its host pool and promote them to free device
// blocks; B's next request for that session finds them on its device (no restore, no peer fetch
// on the critical path). Forget drops them; bad advisories get clear errors. Reference engine
// (CPU), real pools, NATS and gRPC; the requests go through the scheduler's own NATS client.
import { chunkKeys } from '@mnemo/kv-core';
import type { NodeManagerHandle } from '../../apps/node-manager/src/bootstrap/app.js';
import { loadSchedulerConfig } from '../../apps/scheduler/src/config/scheduler.config.js';
import { NatsNodePrefetcher } from '../../apps/scheduler/src/sessions/nats-node.prefetcher.js';
import type { PrefetchInit } from '../../apps/scheduler/src/sessions/node-prefetch.port.js';
import { clusterFor, scrape, eventually, referenceNodeEnv } from './cluster.js';
import { dispatch } from './direct-dispatch.js';

const MODEL = 'mnemo-tiny';
const history = Array.from({ length: 600 }, (_, i) => (i * 23 + 5) % 250);

describe('advisory prefetch on a running node', () => {
  const started = clusterFor({ nodes: 2, nodeEnv: referenceNodeEnv(MODEL, 128) });
  let a: NodeManagerHandle;
  let b: NodeManagerHandle;
  let nodes: NatsNodePrefetcher;

  beforeAll(() => {
    [a, b] = started.nodes as [NodeManagerHandle, NodeManagerHandle];
    // The scheduler's own client for the nodes' prefetch subjects: the requests an advisory sends, its answers as it reads them.
    nodes = new NatsNodePrefetcher(
      started.cluster.nc,
      loadSchedulerConfig({ NATS_URL: 'nats://unused:4222', SCHEDULER_PREFETCH_TIMEOUT_MS: '5000' }),
    );
  });

  it('prefetches a session from another node; the request on the chosen node finds its KV on the device', async () => {
    const first = await dispatch(started.cluster, a.nodeId, history);
    const keys = chunkKeys(MODEL, 'itest', history);
    const reply = await nodes.prefetch(b.nodeId, {
      advisoryId: 'adv-1',
      sessionId: 's1',
      model: MODEL,
      chunkKeys: keys,
      sources: [{ nodeId: a.nodeId, grpcAddress: a.grpcAddress, chunkKeys: keys }],
    });
    expect(reply).toEqual({ kind: 'queued', chunks: 2 });
    await eventually(async () => (await scrape(b.metricsPort, 'mnemo_kv_prefetch_chunks_total')) === 2, 'the prefetch to land');
    expect(await scrape(b.metricsPort, 'mnemo_kv_prefetch_promoted_chunks_total')).toBe(2);

    const next = [...history, ...first.tokens, 1, 2, 3];
    const turn = await dispatch(started.cluster, b.nodeId, next);
    expect(turn.done!.usage?.cachedTokens).toBe(512);
    expect(await scrape(b.metricsPort, 'mnemo_kv_prefetch_promoted_used_total')).toBe(2);
    expect(await scrape(b.metricsPort, 'mnemo_kv_hit_tokens_total{tier="host"}')).toBe(0);
    expect(await scrape(b.metricsPort, 'mnemo_kv_peer_restores_total')).toBe(0);
    // Same answer as the node that computed it all.
    const there = await dispatch(started.cluster, a.nodeId, next);
    expect(turn.tokens).toEqual(there.tokens);
  });

  it('forget drops an unused prefetch; forgetting an unknown advisory is answered the same', async () => {
    const t = Array.from({ length: 300 }, (_, i) => (i * 11 + 1) % 250);
    await dispatch(started.cluster, a.nodeId, t);
    const keys = chunkKeys(MODEL, 'itest', t);
    const before = (await scrape(b.metricsPort, 'mnemo_kv_prefetch_chunks_total')) ?? 0;
    expect(
      await nodes.prefetch(b.nodeId, {
        advisoryId: 'adv-2',
        sessionId: 's2',
        model: MODEL,
        chunkKeys: keys,
        sources: [{ nodeId: a.nodeId, grpcAddress: a.grpcAddress, chunkKeys: keys }],
      }),
    ).toEqual({ kind: 'queued', chunks: 1 });
    await eventually(async () => (await scrape(b.metricsPort, 'mnemo_kv_prefetch_chunks_total')) === before + 1, 'the prefetch to land');
    const used = (await scrape(b.metricsPort, 'mnemo_kv_tier_bytes{tier="host",state="used"}'))!;
    expect(await nodes.forget(b.nodeId, { advisoryId: 'adv-2' })).toEqual({ kind: 'queued', chunks: 1 });
    expect((await scrape(b.metricsPort, 'mnemo_kv_tier_bytes{tier="host",state="used"}'))!).toBeLessThan(used);
    expect(await nodes.forget(b.nodeId, { advisoryId: 'adv-2' })).toEqual({ kind: 'queued', chunks: 0 });
    expect(await nodes.forget(b.nodeId, { advisoryId: 'never-was' })).toEqual({ kind: 'queued', chunks: 0 });
  });

  it.each<[string, PrefetchInit, string]>([
    ['no advisory id', { model: MODEL }, 'invalid_request'],
    ['an unknown model', { advisoryId: 'x', model: 'nope' }, 'model_not_found'],
    ['a malformed chunk key', { advisoryId: 'x', model: MODEL, chunkKeys: ['nope'] }, 'invalid_request'],
    ['an expired advisory', { advisoryId: 'x', model: MODEL, expiresAtMs: 1n }, 'invalid_request'],
  ])('answers %s with %s', async (_n, init, code) => {
    expect(await nodes.prefetch(b.nodeId, init)).toEqual({ kind: 'refused', code });
  });

  it('answers a forget naming nothing with invalid_request', async () => {
    expect(await nodes.forget(b.nodeId, {})).toEqual({ kind: 'refused', code: 'invalid_request' });
  });
});
