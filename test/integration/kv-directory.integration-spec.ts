// Symphony control half: the scheduler's KV directory is built from the nodes' KV events and,
// after a scheduler restart, rebuilt from the nodes' full reports (soft state, nothing persisted).
import { chunkKeys } from '@mnemo/kv-core';
import { startScheduler } from '../../apps/scheduler/src/app.js';
import { Cluster, natsUrl, scrape, TEST_NODE_TIMEOUT_MS, waitFor } from './cluster.js';

const holdings = (port: number) => scrape(port, 'mnemo_scheduler_kv_directory_holdings');

describe('scheduler KV directory', () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await Cluster.start({ nodes: 1, nodeEnv: { NODE_ENGINE: 'sim', NODE_KV_BLOCKS: '256' } });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('learns the chunks a node computed, and relearns them from a report after a restart', async () => {
    // 600 tokens: two whole 256-token chunks, each a device-tier holding on the node.
    const tokens = Array.from({ length: 600 }, (_, i) => (i * 7) % 250);
    const run = await cluster.infer({ tokens, chunkKeys: chunkKeys('mnemo-tiny', 'itest', tokens) });
    expect(run.error).toBeUndefined();
    await run.done();
    run.close();
    await waitFor(
      async () => ((await holdings(cluster.schedulers[0]!.metricsPort)) ?? 0) >= 2,
      10_000,
      'the directory to hold the two chunks',
      100,
    );

    await cluster.schedulers[0]!.stop();
    cluster.schedulers.length = 0;
    // The node stays idle: no new KV event will come; only a report can fill the new directory.
    cluster.schedulers.push(
      await startScheduler({
        NATS_URL: natsUrl(),
        METRICS_PORT: '0',
        LOG_LEVEL: 'warn',
        SCHEDULER_NODE_TIMEOUT_MS: String(TEST_NODE_TIMEOUT_MS),
      }),
    );
    const port = cluster.schedulers[0]!.metricsPort;
    await waitFor(async () => ((await holdings(port)) ?? 0) >= 2, 10_000, 'the restarted directory to hold the chunks again', 100);
    expect(await scrape(port, 'mnemo_scheduler_kv_events_total{kind="report"}')).toBeGreaterThanOrEqual(1);
    expect(await scrape(port, 'mnemo_scheduler_kv_reports_requested_total{reason="joined"}')).toBeGreaterThanOrEqual(1);
  });
});
