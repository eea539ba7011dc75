// Hardening issue, defect 2: a full KV pool must not kill the batch. With a device cache far too
// small for the concurrent load, every request that fits the cache alone completes — with the
// answer it gets alone (greedy, reference engine) — because the node preempts and recomputes;
// a request that could never fit gets a clear 400 before it is admitted.
import { gatewayCluster, scrape, referenceNodeEnv } from './cluster.js';

const MODEL = 'mnemo-tiny';

interface TextBody {
  choices: Array<{ text: string; finish_reason: string }>;
  usage: { completion_tokens: number };
}

async function complete(
  base: string,
  prompt: number[],
  maxTokens: number,
): Promise<{ status: number; body: TextBody & { error?: { code: string; message: string } } }> {
  const res = await fetch(`${base}/v1/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, prompt, max_tokens: maxTokens, temperature: 0 }),
  });
  return { status: res.status, body: (await res.json()) as TextBody & { error?: { code: string; message: string } } };
}

const promptOf = (i: number) => Array.from({ length: 40 }, (_, j) => (j * 31 + i * 17 + 1) % 250);

describe('a full KV pool under concurrent load', () => {
  // 8 blocks = 128 tokens; each request below needs 5 blocks alone, four at once need 20.
  const gw = gatewayCluster({
    nodes: 1,
    nodeEnv: referenceNodeEnv(MODEL, 8, { NODE_MAX_BATCH: '4', NODE_KV_LAYER_STREAM: 'off' }),
  });

  it('completes every request that fits alone, with the answer it gets alone', async () => {
    const alone: TextBody[] = [];
    for (let i = 0; i < 4; i++) alone.push((await complete(gw.base, promptOf(i), 40)).body);
    const preemptionsBefore = (await scrape(gw.cluster.nodes[0]!.metricsPort, 'mnemo_node_preemptions_total')) ?? 0;
    const together = await Promise.all([0, 1, 2, 3].map((i) => complete(gw.base, promptOf(i), 40)));
    for (let i = 0; i < 4; i++) {
      expect(together[i]!.status).toBe(200);
      expect(together[i]!.body.choices).toEqual(alone[i]!.choices);
      expect(together[i]!.body.usage.completion_tokens).toBe(alone[i]!.usage.completion_tokens);
    }
    expect((await scrape(gw.cluster.nodes[0]!.metricsPort, 'mnemo_node_preemptions_total')) ?? 0).toBeGreaterThan(preemptionsBefore);
  });

  it('refuses a request that could never fit the device cache with a clear 400', async () => {
    const { status, body } = await complete(gw.base, promptOf(9), 100);
    expect(status).toBe(400);
    expect(body.error?.code).toBe('context_length_exceeded');
    expect(body.error?.message).toMatch(/KV blocks/);
  });
});
