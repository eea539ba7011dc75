// FastSwitch through the whole path: the API `priority` reaches a node that schedules by priority
// (NODE_SCHEDULING=priority) and preempts by swapping KV to host memory (NODE_PREEMPTION=swap).
// With a device cache far too small for the concurrent load, every request completes with the
// answer it gets alone (greedy, reference engine, CPU), and the node swapped instead of recomputing.
import { Cluster, scrape } from './cluster.js';

const MODEL = 'mnemo-tiny';

interface TextBody {
  choices: Array<{ text: string; finish_reason: string }>;
  usage: { completion_tokens: number };
  error?: { code: string; message: string };
}

async function complete(base: string, prompt: number[], maxTokens: number, priority: number): Promise<{ status: number; body: TextBody }> {
  const res = await fetch(`${base}/v1/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, prompt, max_tokens: maxTokens, temperature: 0, priority }),
  });
  return { status: res.status, body: (await res.json()) as TextBody };
}

const promptOf = (i: number) => Array.from({ length: 40 }, (_, j) => (j * 29 + i * 13 + 3) % 250);

describe('priority scheduling with swap preemption (FastSwitch)', () => {
  let cluster: Cluster;
  let base: string;
  beforeAll(async () => {
    // 8 blocks = 128 tokens; each request needs 5 blocks alone, four at once need 20.
    cluster = await Cluster.start({
      nodes: 1,
      gateway: true,
      nodeEnv: {
        NODE_ENGINE: 'reference',
        NODE_REFERENCE_BACKEND: 'cpu',
        NODE_KV_BLOCKS: '8',
        NODE_MODELS: MODEL,
        NODE_MAX_BATCH: '4',
        NODE_SCHEDULING: 'priority',
        NODE_PREEMPTION: 'swap',
        NODE_BLOCK_GROUP_BLOCKS: '4',
      },
    });
    base = `http://127.0.0.1:${cluster.gateway!.httpPort}`;
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('requests of mixed priority under KV pressure complete with the answers they get alone, by swapping', async () => {
    const alone: TextBody[] = [];
    for (let i = 0; i < 4; i++) alone.push((await complete(base, promptOf(i), 40, 0)).body);
    const port = cluster.nodes[0]!.metricsPort;
    const swapsBefore = (await scrape(port, 'mnemo_node_swaps_total{direction="out",mode="sync"}')) ?? 0;
    const together = await Promise.all([0, 1, 2, 3].map((i) => complete(base, promptOf(i), 40, i * 10)));
    for (let i = 0; i < 4; i++) {
      expect(together[i]!.status).toBe(200);
      expect(together[i]!.body.choices).toEqual(alone[i]!.choices);
      expect(together[i]!.body.usage.completion_tokens).toBe(alone[i]!.usage.completion_tokens);
    }
    expect((await scrape(port, 'mnemo_node_swaps_total{direction="out",mode="sync"}')) ?? 0).toBeGreaterThan(swapsBefore);
    expect((await scrape(port, 'mnemo_node_swap_bytes_total{direction="out"}')) ?? 0).toBeGreaterThan(0);
  });

  it('a priority outside −1000…1000 is refused with a 400', async () => {
    const { status, body } = await complete(base, promptOf(0), 4, 5000);
    expect(status).toBe(400);
    expect(body.error?.code).toBeDefined();
  });
});
