// Node registry and routing over real NATS: heartbeats, expiry, goodbye, failover, replicas.
import { decodeMessage, NodeDownSchema, Subjects, type NodeDown } from '@mnemo/proto';
import { scrape, TEST_HEARTBEAT_MS, TEST_NODE_TIMEOUT_MS, waitFor, withCluster, type Cluster, type InferenceRun } from './cluster.js';

/** NODE_DOWN messages heard on the cluster's connection from now on. */
function watchNodeDown(cluster: Cluster): NodeDown[] {
  const heard: NodeDown[] = [];
  cluster.nc.subscribe(Subjects.NODE_DOWN, {
    callback: (err, msg) => {
      if (!err) heard.push(decodeMessage(NodeDownSchema, msg.data));
    },
  });
  return heard;
}

/** The run was routed to `nodeId`; waits for its end. */
async function servedBy(run: InferenceRun, nodeId: string): Promise<void> {
  expect(run.nodeId).toBe(nodeId);
  await run.done();
  run.close();
}

describe('cluster membership and routing', () => {
  it('drops a node that stops beating within the timeout; new requests go to the survivor', () =>
    withCluster({ nodes: 2 }, async (cluster) => {
      const [dead, alive] = cluster.nodes;
      const port = cluster.schedulers[0].metricsPort;
      const downs = watchNodeDown(cluster);
      await cluster.nc.flush();
      await dead.kill();
      const killedAt = Date.now();
      await waitFor(async () => (await scrape(port, 'mnemo_scheduler_live_nodes')) === 1, 5000, 'the dead node to be dropped');
      const tookMs = Date.now() - killedAt;
      // Gateways hear of it: one NODE_DOWN naming the incarnation that went silent.
      await waitFor(() => downs.length > 0, 2000, 'NODE_DOWN');
      expect(downs).toEqual([
        expect.objectContaining({ nodeId: dead.nodeId, reason: 'timeout', bootId: expect.stringMatching(/^[0-9a-f-]{36}$/) }),
      ]);
      // Dropped by the expiry sweep (no request touched it), within timeout + sweep period + a last beat.
      expect(await scrape(port, 'mnemo_scheduler_nodes_dropped_total{reason="timeout"}')).toBe(1);
      expect(tookMs).toBeGreaterThanOrEqual(TEST_NODE_TIMEOUT_MS - 2 * TEST_HEARTBEAT_MS);
      expect(tookMs).toBeLessThan(TEST_NODE_TIMEOUT_MS + 1500);

      for (let i = 0; i < 3; i++) await servedBy(await cluster.infer(), alive.nodeId);
    }));

  it('reroutes at once when the picked node has just died (before the sweep)', () =>
    withCluster({ nodes: 2 }, async (cluster) => {
      // Three concurrent requests: with pending counts, at least one picks the dead node first.
      const [dead, alive] = cluster.nodes;
      await dead.kill();
      const runs = await Promise.all([0, 1, 2].map(() => cluster.infer()));
      for (const run of runs) await servedBy(run, alive.nodeId);
      expect(
        await scrape(cluster.schedulers[0].metricsPort, 'mnemo_scheduler_dispatches_total{outcome="unreachable"}'),
      ).toBeGreaterThanOrEqual(1);
    }));

  it('takes a gracefully stopping node out of routing at once (goodbye heartbeat)', () =>
    withCluster({ nodes: 2 }, async (cluster) => {
      const [leaving, staying] = cluster.nodes;
      const downs = watchNodeDown(cluster);
      await cluster.nc.flush();
      await leaving.stop();
      // Far sooner than the expiry timeout: the goodbye is applied on arrival.
      await cluster.waitForLiveNodes(1, TEST_NODE_TIMEOUT_MS / 2);
      // A goodbye is no death: the node drained its own requests, nobody moves them.
      expect(downs).toEqual([]);
      await servedBy(await cluster.infer(), staying.nodeId);
    }));

  it('spreads requests over idle nodes (least loaded)', () =>
    withCluster({ nodes: 2, nodeEnv: { NODE_SIM_DECODE_STEP_MS: '5' } }, async (cluster) => {
      const runs = await Promise.all(
        [0, 1].map((i) => cluster.infer({ sampling: { temperature: 1, topP: 1, maxTokens: 30, seed: BigInt(i) } })),
      );
      expect(new Set(runs.map((r) => r.nodeId)).size).toBe(2);
      await Promise.all(runs.map((r) => r.done()));
      runs.forEach((r) => r.close());
    }));

  it('runs several scheduler replicas safely: each request is dispatched exactly once', () =>
    withCluster({ nodes: 1, schedulers: 2 }, async (cluster) => {
      const runs = await Promise.all(
        [...Array(6).keys()].map(() => cluster.infer({ sampling: { temperature: 1, topP: 1, maxTokens: 3, seed: 1n } })),
      );
      const all = await Promise.all(runs.map((r) => r.done()));
      runs.forEach((r) => r.close());
      for (const events of all) expect(events.filter((e) => e.done)).toHaveLength(1);
      let dispatched = 0;
      for (const s of cluster.schedulers)
        dispatched += (await scrape(s.metricsPort, 'mnemo_scheduler_dispatches_total{outcome="admitted"}')) ?? 0;
      expect(dispatched).toBe(6);
    }));

  it('answers no_node_available when no node is alive', () =>
    withCluster({ nodes: 0 }, async (cluster) => {
      const run = await cluster.infer();
      expect(run.error?.code).toBe('no_node_available');
    }));
});
