// A node-manager running the reference engine (CPU kernels): the cluster path returns exactly
// the tokens the engine produces on its own, so the node adds nothing and loses nothing.
import { ByteTokenizer, ReferenceEngine } from '@mnemo/engine';
import { FinishReason } from '@mnemo/proto';
import { Cluster } from './cluster.js';

const tok = new ByteTokenizer();

describe('node-manager with NODE_ENGINE=reference', () => {
  let cluster: Cluster;

  beforeAll(async () => {
    cluster = await Cluster.start({ nodes: 1, nodeEnv: { NODE_ENGINE: 'reference', NODE_REFERENCE_BACKEND: 'cpu', NODE_KV_BLOCKS: '64' } });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('streams the same greedy tokens as the engine alone', async () => {
    const prompt = tok.encode('The cache lives here.');
    const run = await cluster.infer({ tokens: prompt, sampling: { temperature: 0, topP: 1, maxTokens: 6, seed: 0n } });
    const events = await run.done();
    run.close();
    expect(events.at(-1)).toMatchObject({ done: true, finishReason: FinishReason.LENGTH, usage: { promptTokens: prompt.length, completionTokens: 6 } });

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
});
