// Issue "reference engine", done-when: a chat completion through the running cluster
// (gateway → scheduler → node-manager) is served by the reference engine, and the text the
// client sees is exactly what the engine computes for the templated prompt.
import { applyChatTemplate, ByteTokenizer, ReferenceEngine } from '@mnemo/engine';
import { gatewayCluster, referenceNodeEnv } from './cluster.js';

const MODEL = 'mnemo-tiny';

describe('chat completion served by the reference engine', () => {
  const gw = gatewayCluster({
    nodes: 1,
    nodeEnv: referenceNodeEnv(MODEL, 64),
  });

  it('lists the model as served by the reference engine', async () => {
    const res = await fetch(`${gw.base}/v1/models`);
    const body = (await res.json()) as { data: Array<{ id: string; engine: string }> };
    expect(body.data).toEqual(expect.arrayContaining([expect.objectContaining({ id: MODEL, engine: 'reference' })]));
  });

  it('returns the engine’s own greedy continuation of the templated prompt', async () => {
    const messages = [{ role: 'user' as const, content: 'Where does the KV cache live?' }];
    const res = await fetch(`${gw.base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages, max_tokens: 8, temperature: 0 }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { choices: Array<{ message: { content: string } }>; usage: { completion_tokens: number } };

    const tok = new ByteTokenizer();
    const prompt = applyChatTemplate(tok, messages);
    const engine = await ReferenceEngine.create({ models: [MODEL], backend: 'cpu', kvBlocks: 64 });
    try {
      const sampling = { temperature: 0, topP: 1, seed: 0 };
      const tokens = [(await engine.prefill([{ seqId: 's', model: MODEL, tokens: prompt, sampling }]))[0].token];
      while (tokens.length < body.usage.completion_tokens) tokens.push((await engine.decode(['s']))[0].token);
      expect(body.usage.completion_tokens).toBeGreaterThan(0);
      expect(body.choices[0].message.content).toBe(tok.decode(tokens.filter((t) => t !== tok.eosTokenId)));
    } finally {
      await engine.close();
    }
  });
});
