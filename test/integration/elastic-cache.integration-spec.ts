// SwiftCache on a real node: two reference models on one device budget (NODE_KV_DEVICE_BYTES).
// A request longer than its model's half of the budget completes because the idle model lends it
// whole elastic units; the lender's own request then takes them back; without elasticity the same
// request is refused with a clear 400. Metrics show owned / lent / borrowed blocks.
import { Cluster, scrape, waitFor, referenceNodeEnv } from './cluster.js';

// mnemo-tiny and mnemo-tiny-qwen3 both have 4096-element blocks (16 KiB at fp32): one unit = one block
// of each. 256 KiB → 16 units → regions of 8 blocks (128 tokens) each.
const nodeEnv = referenceNodeEnv('mnemo-tiny,mnemo-tiny-qwen3', undefined, {
  NODE_KV_DEVICE_BYTES: '256KiB',
  NODE_KV_ELASTIC_TICK_MS: '50',
});
const LONG = Array.from({ length: 150 }, (_, j) => (j * 31 + 7) % 250);

async function complete(base: string, model: string, prompt: number[], maxTokens: number) {
  const res = await fetch(`${base}/v1/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, prompt, max_tokens: maxTokens, temperature: 0 }),
  });
  return {
    status: res.status,
    body: (await res.json()) as {
      choices?: Array<{ text: string }>;
      usage?: { completion_tokens: number };
      error?: { code: string; message: string };
    },
  };
}

describe('elastic KV cache on one device budget', () => {
  describe('NODE_KV_ELASTIC=on', () => {
    let cluster: Cluster;
    let base: string;
    beforeAll(async () => {
      cluster = await Cluster.start({ nodes: 1, gateway: true, nodeEnv });
      base = `http://127.0.0.1:${cluster.gateway!.httpPort}`;
    });
    afterAll(async () => {
      await cluster?.stop();
    });

    it('a context over its model’s region completes on units the idle model lends', async () => {
      const port = cluster.nodes[0]!.metricsPort;
      expect(await scrape(port, 'mnemo_kv_elastic_blocks{model="mnemo-tiny",state="owned"}')).toBe(8);
      const { status, body } = await complete(base, 'mnemo-tiny', LONG, 20);
      expect(status).toBe(200);
      expect(body.usage?.completion_tokens).toBe(20);
      expect(await scrape(port, 'mnemo_kv_elastic_master{model="mnemo-tiny"}')).toBe(1);
      expect(await scrape(port, 'mnemo_kv_elastic_blocks{model="mnemo-tiny",state="borrowed"}')).toBeGreaterThanOrEqual(3);
      expect(await scrape(port, 'mnemo_kv_elastic_blocks{model="mnemo-tiny-qwen3",state="lent"}')).toBeGreaterThanOrEqual(3);
    });

    it('the lender’s own long request takes its units back and completes', async () => {
      const port = cluster.nodes[0]!.metricsPort;
      const { status } = await complete(base, 'mnemo-tiny-qwen3', LONG.slice(0, 100), 20);
      expect(status).toBe(200);
      await waitFor(
        async () => (await scrape(port, 'mnemo_kv_elastic_blocks{model="mnemo-tiny-qwen3",state="owned"}')) === 8,
        5000,
        'qwen3 owns its region again',
        100,
      );
      expect(await scrape(port, 'mnemo_kv_elastic_resize_events_total{model="mnemo-tiny-qwen3"}')).toBeGreaterThanOrEqual(2);
    });
  });

  describe('NODE_KV_ELASTIC=off', () => {
    let cluster: Cluster;
    beforeAll(async () => {
      cluster = await Cluster.start({
        nodes: 1,
        gateway: true,
        nodeEnv: { ...nodeEnv, NODE_KV_ELASTIC: 'off', NODE_KV_LAYER_STREAM: 'off' },
      });
    });
    afterAll(async () => {
      await cluster?.stop();
    });

    it('the same request is refused: the region is the limit', async () => {
      const { status, body } = await complete(`http://127.0.0.1:${cluster.gateway!.httpPort}`, 'mnemo-tiny', LONG, 20);
      expect(status).toBe(400);
      expect(body.error?.message).toMatch(/KV blocks/);
    });
  });
});
