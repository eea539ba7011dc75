// FastSwitch through the whole path: the API `priority` reaches a node that schedules by priority
// (NODE_SCHEDULING=priority) and preempts by swapping KV to host memory (NODE_PREEMPTION=swap).
// With a device cache far too small for the concurrent load, every request completes with the
// answer it gets alone (greedy, reference engine, CPU), and the node swapped instead of recomputing.
import { gatewayCluster, scrape, type Cluster } from './cluster.js';

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

/**
 * One reference node behind a gateway for the enclosing describe block, scheduling by priority and
 * preempting by swap, with `kvBlocks` device blocks.
 */
function swapCluster(kvBlocks: number): { readonly cluster: Cluster; readonly base: string } {
  return gatewayCluster({
    nodes: 1,
    nodeEnv: {
      NODE_ENGINE: 'reference',
      NODE_REFERENCE_BACKEND: 'cpu',
      NODE_KV_BLOCKS: String(kvBlocks),
      NODE_MODELS: MODEL,
      NODE_MAX_BATCH: '4',
      NODE_SCHEDULING: 'priority',
      NODE_PREEMPTION: 'swap',
      NODE_BLOCK_GROUP_BLOCKS: '4',
    },
  });
}

const promptOf = (i: number) => Array.from({ length: 40 }, (_, j) => (j * 29 + i * 13 + 3) % 250);
/** Prompts whose greedy answer on mnemo-tiny runs the full 80 tokens (others sample EOS early). */
const LONG = [4, 5, 7, 8];

describe('priority scheduling with swap preemption (FastSwitch)', () => {
  // 8 blocks = 128 tokens; each request needs up to 8 blocks alone (40 + 80 tokens): no two finish side by side.
  const c = swapCluster(8);

  it('requests of mixed priority under KV pressure complete with the answers they get alone, by swapping', async () => {
    const alone: TextBody[] = [];
    for (const p of LONG) alone.push((await complete(c.base, promptOf(p), 80, 0)).body);
    // Each answer is long enough that no two requests fit the pool side by side to the end.
    expect(alone.map((a) => a.usage.completion_tokens)).toEqual([80, 80, 80, 80]);
    const port = c.cluster.nodes[0]!.metricsPort;
    const swapsBefore = (await scrape(port, 'mnemo_node_swaps_total{direction="out",mode="sync"}')) ?? 0;
    // Two low-priority requests first; the high-priority ones once both run (so they overlap on
    // the node rather than being served one after another).
    const low = [0, 1].map((i) => complete(c.base, promptOf(LONG[i]!), 80, 0));
    for (let tries = 0; tries < 2000 && ((await scrape(port, 'mnemo_node_running_sequences')) ?? 0) < 2; tries++)
      await new Promise((r) => setTimeout(r, 5));
    const high = [2, 3].map((i) => complete(c.base, promptOf(LONG[i]!), 80, 10 + i));
    const together = await Promise.all([...low, ...high]);
    for (let i = 0; i < 4; i++) {
      expect(together[i]!.status).toBe(200);
      expect(together[i]!.body.choices).toEqual(alone[i]!.choices);
      expect(together[i]!.body.usage.completion_tokens).toBe(alone[i]!.usage.completion_tokens);
    }
    expect((await scrape(port, 'mnemo_node_swaps_total{direction="out",mode="sync"}')) ?? 0).toBeGreaterThan(swapsBefore);
    expect((await scrape(port, 'mnemo_node_swap_bytes_total{direction="out"}')) ?? 0).toBeGreaterThan(0);
  });

  it('a priority outside −1000…1000 is refused with a 400', async () => {
    const { status, body } = await complete(c.base, promptOf(0), 4, 5000);
    expect(status).toBe(400);
    expect(body.error?.code).toBeDefined();
  });
});

// FastSwitch's host copy and the KV store's host pool as one, through the whole node: prompts of
// a whole chunk and more, whose first chunk the store has written through to the host pool, are
// swapped out without copying that chunk again, and still answer as they do alone.
describe('swap preemption leaning on the KV store host pool (one host copy)', () => {
  // 40 blocks = 640 tokens: two requests of 272 + 100 tokens (24 blocks each) cannot finish side by side.
  const c = swapCluster(40);
  const longPrompt = (i: number) => Array.from({ length: 272 }, (_, j) => (j * 29 + i * 13 + 3) % 250);
  /** Prompts whose greedy answer on mnemo-tiny runs the full 100 tokens. */
  const FULL = [1, 4];

  it('a preempted request swaps out only what the host pool lacks and answers as it does alone', async () => {
    const alone: TextBody[] = [];
    for (const p of FULL) alone.push((await complete(c.base, longPrompt(p), 100, 0)).body);
    expect(alone.map((a) => a.usage.completion_tokens)).toEqual([100, 100]);
    const port = c.cluster.nodes[0]!.metricsPort;
    const low = complete(c.base, longPrompt(FULL[0]!), 100, 0);
    for (let tries = 0; tries < 2000 && ((await scrape(port, 'mnemo_node_running_sequences')) ?? 0) < 1; tries++)
      await new Promise((r) => setTimeout(r, 5));
    const high = complete(c.base, longPrompt(FULL[1]!), 100, 10);
    const together = await Promise.all([low, high]);
    together.forEach((t, i) => {
      expect(t.status).toBe(200);
      expect(t.body.choices).toEqual(alone[i]!.choices);
    });
    expect((await scrape(port, 'mnemo_node_swaps_total{direction="out",mode="sync"}')) ?? 0).toBeGreaterThan(0);
    // The first chunk (16 blocks) of the swapped-out prompt stayed in the host pool, pinned.
    expect((await scrape(port, 'mnemo_node_swap_held_blocks_total')) ?? 0).toBeGreaterThanOrEqual(16);
    // Finished: nothing is pinned for swaps any more.
    expect(await scrape(port, 'mnemo_kv_swap_held_chunks')).toBe(0);
  });
});
