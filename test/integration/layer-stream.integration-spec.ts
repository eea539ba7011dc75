// SwiftCache's layer stream cache on the serving path: a prompt longer than its model's device KV
// cache completes through the gateway (OpenAI API) with the tokens a node with ample memory gives;
// /metrics shows stream stall time, streamed sequences and bytes; what even the stream cannot
// hold gets a 400 naming both limits; a client that disconnects mid-stream frees everything.
import { ByteTokenizer, ReferenceEngine } from '@mnemo/engine';
import { Cluster, scrape, waitFor, referenceNodeEnv } from './cluster.js';

const MODEL = 'mnemo-tiny';
// mnemo-tiny: 4 layers, 16 KiB blocks at fp32. 16 device blocks (256 tokens); window 2 → the stream
// holds C blocks with ⌈C/2⌉ ≤ 16 planes on the device: 32 blocks (512 tokens), the rest in host memory.
const nodeEnv = referenceNodeEnv(MODEL, 16, { NODE_KV_LAYER_STREAM: 'on', NODE_KV_STREAM_HOST_MB: '4' });
const LONG = Array.from({ length: 300 }, (_, j) => (j * 31 + 7) % 250);
const MAX_TOKENS = 20;

async function complete(base: string, prompt: number[], maxTokens: number, init: RequestInit = {}) {
  return fetch(`${base}/v1/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, prompt, max_tokens: maxTokens, temperature: 0, ...(init.signal ? { stream: true } : {}) }),
    ...init,
  });
}

/** The same greedy completion on an engine with ample device memory, in this process. */
async function ampleCompletion(prompt: number[], maxTokens: number): Promise<string> {
  const engine = await ReferenceEngine.create({ models: [MODEL], backend: 'cpu', kvBlocks: 64 });
  try {
    const eos = engine.models()[0]!.eosTokenId;
    const greedy = { temperature: 0, topP: 1, seed: 0 };
    const out = [(await engine.prefill([{ seqId: 's', model: MODEL, tokens: prompt, sampling: greedy }]))[0]!.token];
    while (out.length < maxTokens && out.at(-1) !== eos) out.push((await engine.decode(['s']))[0]!.token);
    return new ByteTokenizer().decode(out.filter((t) => t !== eos));
  } finally {
    await engine.close();
  }
}

describe('layer stream cache on the serving path', () => {
  let cluster: Cluster;
  let base: string;
  let port: number;
  beforeAll(async () => {
    cluster = await Cluster.start({ nodes: 1, gateway: true, nodeEnv });
    base = `http://127.0.0.1:${cluster.gateway!.httpPort}`;
    port = cluster.nodes[0]!.metricsPort;
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('a prompt longer than the device cache completes with the text of ample memory; /metrics shows the stream', async () => {
    const res = await complete(base, LONG, MAX_TOKENS);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { choices: Array<{ text: string }>; usage: { prompt_tokens: number; completion_tokens: number } };
    expect(body.usage.prompt_tokens).toBe(LONG.length);
    expect(body.choices[0]!.text).toBe(await ampleCompletion(LONG, MAX_TOKENS));
    expect(await scrape(port, `mnemo_kv_streamed_sequences_total{model="${MODEL}"}`)).toBe(1);
    expect(await scrape(port, `mnemo_kv_streamed_bytes_total{model="${MODEL}"}`)).toBeGreaterThan(0);
    const stall = await scrape(port, `mnemo_kv_stream_stall_seconds_total{model="${MODEL}"}`);
    expect(stall).toBeGreaterThanOrEqual(0);
    expect(await scrape(port, 'mnemo_node_kv_usage_ratio')).toBe(0);
  });

  it('what the stream cannot hold either is a 400 naming both limits', async () => {
    const res = await complete(
      base,
      Array.from({ length: 600 }, (_, j) => j % 250),
      100,
    );
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('context_length_exceeded');
    expect(body.error.message).toMatch(/16 for mnemo-tiny on the device, 32 through the layer stream cache/);
  });

  // A cancel inside a streamed pass is pinned down in streamed-sequence.spec.ts (node) and
  // streamed-sequences.spec.ts (engine): on this tiny model the generation may outrun the client.
  it('a client that disconnects mid-stream leaves nothing held', async () => {
    const before = (await scrape(port, `mnemo_kv_streamed_sequences_total{model="${MODEL}"}`)) ?? 0;
    const ac = new AbortController();
    const res = await complete(base, LONG, 200, { signal: ac.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('"text"')) text += new TextDecoder().decode((await reader.read()).value);
    ac.abort();
    await waitFor(
      async () => (await scrape(port, 'mnemo_node_kv_usage_ratio')) === 0 && (await scrape(port, 'mnemo_node_running_sequences')) === 0,
      10_000,
      'the node holds nothing',
      50,
    );
    expect(await scrape(port, `mnemo_kv_streamed_sequences_total{model="${MODEL}"}`)).toBe(before + 1);
    // The freed memory takes the next long request at once.
    expect((await complete(base, LONG, 4)).status).toBe(200);
  });
});
