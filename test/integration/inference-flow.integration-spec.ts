// The request path behind the gateway, over real NATS: scheduler → node → reply inbox.
import { ByteTokenizer } from '@mnemo/engine';
import { FinishReason } from '@mnemo/proto';
import { Cluster, scrape } from './cluster.js';

const tok = new ByteTokenizer();

describe('inference over NATS (scheduler → node → inbox)', () => {
  let cluster: Cluster;

  beforeAll(async () => {
    // 5 ms per decode step: two requests started together overlap for many iterations.
    cluster = await Cluster.start({ nodes: 1, nodeEnv: { NODE_SIM_DECODE_STEP_MS: '5' } });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('lists the models the live nodes serve', async () => {
    await expect(cluster.listModels()).resolves.toContain('mnemo-tiny');
  });

  it('streams a completion token by token to the inbox, then done with usage', async () => {
    const run = await cluster.infer({ sampling: { temperature: 1, topP: 1, maxTokens: 12, seed: 7n } });
    expect(run.error).toBeUndefined();
    expect(run.nodeId).toBe(cluster.nodes[0].nodeId);
    const events = await run.done();
    run.close();
    expect(events.map((e) => e.seq)).toEqual([...Array(12).keys()]);
    expect(events.filter((e) => e.done)).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({
      done: true,
      finishReason: FinishReason.LENGTH,
      usage: { promptTokens: 13, completionTokens: 12 },
    });
    expect(tok.decode(run.tokens())).toMatch(/^[\x20-\x7e]{12}$/);
  });

  it('gives the same text for the same seed and prompt', async () => {
    const a = await cluster.infer({ sampling: { temperature: 1, topP: 1, maxTokens: 10, seed: 99n } });
    const b = await cluster.infer({ sampling: { temperature: 1, topP: 1, maxTokens: 10, seed: 99n } });
    await Promise.all([a.done(), b.done()]);
    a.close();
    b.close();
    expect(b.tokens()).toEqual(a.tokens());
  });

  it('batches two concurrent requests on one node', async () => {
    const node = cluster.nodes[0];
    const before = (await scrape(node.metricsPort, 'mnemo_node_batched_iterations_total')) ?? 0;
    const [a, b] = await Promise.all([
      cluster.infer({ sampling: { temperature: 1, topP: 1, maxTokens: 40, seed: 1n } }),
      cluster.infer({ sampling: { temperature: 1, topP: 1, maxTokens: 40, seed: 2n } }),
    ]);
    expect([a.nodeId, b.nodeId]).toEqual([node.nodeId, node.nodeId]);
    await Promise.all([a.done(), b.done()]);
    a.close();
    b.close();
    const after = await scrape(node.metricsPort, 'mnemo_node_batched_iterations_total');
    expect(after! - before).toBeGreaterThan(0);
    // The decode-size histogram has observations above 1: one engine call carried both sequences.
    const decodeCalls = await scrape(node.metricsPort, 'mnemo_node_batch_size_count{phase="decode"}');
    const singleCalls = await scrape(node.metricsPort, 'mnemo_node_batch_size_bucket{phase="decode",le="1"}');
    expect(decodeCalls! - singleCalls!).toBeGreaterThan(0);
  });

  it('cancel stops generation on the node: a cancelled done event and nothing after it', async () => {
    const node = cluster.nodes[0];
    const run = await cluster.infer({ sampling: { temperature: 1, topP: 1, maxTokens: 3000, seed: 3n } });
    await run.until((es) => es.length >= 3, '3 tokens');
    cluster.cancel(run.nodeId!, run.requestId);
    const events = await run.done();
    const last = events.at(-1)!;
    expect(last).toMatchObject({ done: true, finishReason: FinishReason.CANCELLED, error: { code: 'cancelled' } });
    expect(last.usage!.completionTokens).toBeLessThan(3000);
    const countAtDone = events.length;
    // A later request on the same node runs for several iterations; any token of the cancelled
    // one would have arrived by the time it finishes (same publisher connection, ordered).
    const probe = await cluster.infer({ sampling: { temperature: 1, topP: 1, maxTokens: 5, seed: 4n } });
    await probe.done();
    probe.close();
    run.close();
    expect(run.events).toHaveLength(countAtDone);
    expect(await scrape(node.metricsPort, 'mnemo_node_cancelled_total{reason="client"}')).toBeGreaterThanOrEqual(1);
    expect(await scrape(node.metricsPort, 'mnemo_node_running_sequences')).toBe(0);
  });

  it('cancels a request whose deadline passes while it runs', async () => {
    const run = await cluster.infer({ deadlineUnixMs: Date.now() + 150, sampling: { temperature: 1, topP: 1, maxTokens: 3000, seed: 5n } });
    const events = await run.done();
    run.close();
    expect(events.at(-1)).toMatchObject({ finishReason: FinishReason.CANCELLED, error: { code: 'timeout' } });
  });

  it.each([
    ['an unknown model', { model: 'no-such-model' }, 'model_not_found'],
    ['an empty prompt', { tokens: [] }, 'invalid_request'],
    ['a prompt filling the context', { tokens: new Array(4096).fill(65) }, 'prompt_too_long'],
  ])('answers %s with an error reply', async (_n, init, code) => {
    const run = await cluster.infer(init);
    expect(run.error?.code).toBe(code);
  });
});
