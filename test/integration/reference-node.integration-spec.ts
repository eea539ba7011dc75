// A node-manager running the reference engine (CPU kernels): the cluster path returns exactly
// the tokens the engine produces on its own, so the node adds nothing and loses nothing.
import { ByteTokenizer, ReferenceEngine } from '@mnemo/engine';
import { decodeMessage, FinishReason, HeartbeatSchema, Subjects } from '@mnemo/proto';
import { Cluster, TEST_HEARTBEAT_MS } from './cluster.js';

const tok = new ByteTokenizer();

describe('node-manager with NODE_ENGINE=reference', () => {
  let cluster: Cluster;

  beforeAll(async () => {
    cluster = await Cluster.start({
      nodes: 1,
      nodeEnv: { NODE_ENGINE: 'reference', NODE_REFERENCE_BACKEND: 'cpu', NODE_KV_BLOCKS: '256' },
    });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('streams the same greedy tokens as the engine alone', async () => {
    const prompt = tok.encode('The cache lives here.');
    const run = await cluster.infer({ tokens: prompt, sampling: { temperature: 0, topP: 1, maxTokens: 6, seed: 0n } });
    const events = await run.done();
    run.close();
    expect(events.at(-1)).toMatchObject({
      done: true,
      finishReason: FinishReason.LENGTH,
      usage: { promptTokens: prompt.length, completionTokens: 6 },
    });

    const engine = await ReferenceEngine.create({ models: ['mnemo-tiny'], backend: 'cpu', kvBlocks: 64 });
    try {
      const sampling = { temperature: 0, topP: 1, seed: 0 };
      const expected = [(await engine.prefill([{ seqId: 's', model: 'mnemo-tiny', tokens: prompt, sampling }]))[0].token];
      while (expected.length < 6) expected.push((await engine.decode(['s']))[0].token);
      expect(run.tokens()).toEqual(expected);
    } finally {
      await engine.close();
    }
  });

  it('keeps beating, reports its KV usage and takes a cancel while a long generation runs', async () => {
    // The CPU kernels run on the node's JS thread: this fails if a generation holds the event loop.
    const node = cluster.nodes[0];
    const beats: Array<{ atMs: number; kvUsage: number }> = [];
    const sub = cluster.nc.subscribe(Subjects.HEARTBEAT, {
      callback: (_e, msg) => {
        const h = decodeMessage(HeartbeatSchema, msg.data);
        if (h.nodeId === node.nodeId) beats.push({ atMs: performance.now(), kvUsage: h.kvUsage });
      },
    });
    try {
      const maxTokens = 4000;
      const run = await cluster.infer(
        { tokens: tok.encode('A long answer, please.'), sampling: { temperature: 0, topP: 1, maxTokens, seed: 0n } },
        30_000,
      );
      await run.until((es) => es.length >= 10, 'ten tokens');
      const from = beats.length;
      await new Promise((r) => setTimeout(r, 4 * TEST_HEARTBEAT_MS));
      const during = beats.slice(from);
      expect(during.length).toBeGreaterThanOrEqual(2);
      expect(during.every((b) => b.kvUsage > 0 && b.kvUsage <= 1)).toBe(true);

      cluster.cancel(node.nodeId, run.requestId);
      const events = await run.done();
      run.close();
      expect(events.at(-1)).toMatchObject({ done: true, finishReason: FinishReason.CANCELLED });
      expect(events.at(-1)!.usage!.completionTokens).toBeLessThan(maxTokens);

      const idleFrom = beats.length;
      await new Promise((r) => setTimeout(r, 3 * TEST_HEARTBEAT_MS));
      expect(beats.slice(idleFrom).at(-1)?.kvUsage).toBe(0);
    } finally {
      sub.unsubscribe();
    }
  });
});
