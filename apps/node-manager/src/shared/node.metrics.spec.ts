import { ServiceMetrics } from '@mnemo/service-kit';
import { NodeMetrics } from './node.metrics.js';

describe(NodeMetrics.name, () => {
  it('reads the queue and KV gauges from the wired sources at scrape time', async () => {
    const metrics = new ServiceMetrics('node-test');
    const sut = new NodeMetrics(metrics);
    let kv = 0.25;
    sut.observe({ running: () => 3, waiting: () => 5, paused: () => 2, kvUsage: () => kv });
    const sample = async (name: string) => (await metrics.registry.getSingleMetric(name)!.get()).values[0]?.value;
    expect(await sample('mnemo_node_running_sequences')).toBe(3);
    expect(await sample('mnemo_node_waiting_sequences')).toBe(5);
    expect(await sample('mnemo_node_paused_sequences')).toBe(2);
    expect(await sample('mnemo_node_kv_usage_ratio')).toBe(0.25);
    kv = 0.5;
    expect(await sample('mnemo_node_kv_usage_ratio')).toBe(0.5);
  });
});
