// Symphony control half: routing reads the KV directory. With the prefix's node busy,
// prefix-affinity still sends the next request there (longest cached prefix wins), while
// symphony prefers the idle node and tells it where the prefix lives (kv_sources). `why` then
// says why: the reason, and each candidate's estimated time to first token.
import { chunkKeys, type RoutingPolicyName } from '@mnemo/kv-core';
import { decodeMessage, encodeMessage, Subjects, WhyReplySchema, WhyRequestSchema } from '@mnemo/proto';
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
      // One sequence at a time: the busy node's extra requests queue (routing prices queued requests, not decoding ones).
      nodeEnv: { NODE_ENGINE: 'sim', NODE_KV_BLOCKS: '256', NODE_MODELS: MODEL, NODE_MAX_BATCH: '1' },
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
    const busy = await keepBusy(cluster, first.nodeId!, 4, MODEL, 200);

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
    // Symphony: the extended prompt's home is where the prefix was routed; it left for the queue there.
    const reason = policy === 'symphony' ? 'moved_queue' : 'longest_prefix';
    expect(await scrape(port, `mnemo_scheduler_route_reason_total{policy="${policy}",reason="${reason}"}`)).toBeGreaterThanOrEqual(1);

    const reply = decodeMessage(
      WhyReplySchema,
      (
        await cluster.nc.request(Subjects.WHY, encodeMessage(WhyRequestSchema, { requestId: second.requestId, tenant: 'itest' }), {
          timeout: 5000,
        })
      ).data,
    );
    expect(reply.result.case).toBe('explanation');
    const e = reply.result.value as Extract<typeof reply.result, { case: 'explanation' }>['value'];
    expect(e.routeReason).toBe(reason);
    expect(e.admittedUnixMs).toBeGreaterThan(0n);
    expect(e.firstTokenUnixMs).toBeGreaterThanOrEqual(e.admittedUnixMs);
    if (policy === 'symphony') {
      // Both nodes were weighed: the busy one for its queue, the chosen one for pulling or recomputing the prefix.
      expect(e.candidates.map((c) => c.nodeId).sort()).toEqual(cluster.nodes.map((n) => n.nodeId).sort());
      const chosen = e.candidates.find((c) => c.nodeId === second.nodeId)!;
      const busyOne = e.candidates.find((c) => c.nodeId === first.nodeId)!;
      expect(chosen.totalMs).toBeCloseTo(e.estimateMs, 6);
      for (const c of e.candidates) expect(c.totalMs).toBeCloseTo(c.queueMs + c.kvMs, 6);
      expect(busyOne.queueMs).toBeGreaterThan(chosen.queueMs);
      expect(chosen.kvMs).toBeGreaterThan(busyOne.kvMs);
    } else {
      expect(e.candidates).toEqual([]);
    }
  });
});
