// Symphony control half: routing reads the KV directory. With the prefix's node busy,
// prefix-affinity still sends the next request there (longest cached prefix wins), while
// symphony prefers the idle node and tells it where the prefix lives (kv_sources).
import { chunkKeys, type RoutingPolicyName } from '@mnemo/kv-core';
import { Cluster, scrape, waitFor } from './cluster.js';
import { keepBusy } from './direct-dispatch.js';

const MODEL = 'mnemo-tiny';
const prefix = Array.from({ length: 600 }, (_, i) => (i * 7) % 250);

describe.each<[RoutingPolicyName, 'same' | 'other']>([
  ['prefix-affinity', 'same'],
  ['symphony', 'other'],
])('SCHEDULER_POLICY=%s', (policy, expected) => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await Cluster.start({
      nodes: 2,
      schedulerEnv: { SCHEDULER_POLICY: policy },
      nodeEnv: { NODE_ENGINE: 'sim', NODE_KV_BLOCKS: '256', NODE_MODELS: MODEL },
    });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it(`sends a request whose prefix lives on a busy node to the ${expected} node`, async () => {
    const first = await cluster.infer({
      tokens: prefix,
      chunkKeys: chunkKeys(MODEL, 'itest', prefix),
      sampling: { maxTokens: 2, seed: 1n },
    });
    await first.done();
    first.close();
    const port = cluster.schedulers[0]!.metricsPort;
    await waitFor(
      async () => ((await scrape(port, 'mnemo_scheduler_kv_directory_holdings')) ?? 0) >= 2,
      10_000,
      'the prefix in the directory',
      100,
    );

    // Keep the prefix's node busy with unrelated long requests sent straight to it, and let the
    // scheduler hear its load first.
    const busy = await keepBusy(cluster, first.nodeId!, 2, MODEL);

    const extended = [...prefix, ...Array.from({ length: 40 }, (_, i) => (i * 3) % 250)];
    const second = await cluster.infer({
      tokens: extended,
      chunkKeys: chunkKeys(MODEL, 'itest', extended),
      sampling: { maxTokens: 2, seed: 3n },
    });
    const events = await second.done();
    second.close();
    busy.stop();
    if (expected === 'same') {
      expect(second.nodeId).toBe(first.nodeId);
      expect(events.find((e) => e.usage)?.usage?.cachedTokens).toBeGreaterThanOrEqual(512);
    } else {
      expect(second.nodeId).not.toBe(first.nodeId);
    }
    const reason = policy === 'symphony' ? 'cheapest' : 'longest_prefix';
    expect(await scrape(port, `mnemo_scheduler_routing_decisions_total{policy="${policy}",reason="${reason}"}`)).toBeGreaterThanOrEqual(1);
  });
});
