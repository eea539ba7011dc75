// Hardening issue, defect 1: the late-admit retry race, over real NATS. Node A admits the
// request at once but answers the scheduler late (NODE_ADMIT_REPLY_DELAY_MS > the dispatch
// timeout), so the scheduler gives up on A, abandons that attempt and retries on B with the
// same reply inbox. Both nodes have generated into that inbox. The client must get B's whole
// answer with no spurious error, and A must stop at once instead of generating into a dead inbox.
import { Cluster, scrape, waitFor } from './cluster.js';

const MODEL = 'mnemo-tiny';
const MAX_TOKENS = 300;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

describe('retry after a dispatch timeout (late admission)', () => {
  let cluster: Cluster;
  let base: string;
  let lateNode: string;
  let metricsOf: (nodeId: string) => number;

  beforeAll(async () => {
    cluster = await Cluster.start({
      nodes: 0,
      gateway: true,
      schedulerEnv: { SCHEDULER_DISPATCH_TIMEOUT_MS: '100' },
      nodeEnv: { NODE_MODELS: MODEL, NODE_SIM_DECODE_STEP_MS: '2' },
    });
    // Ties go to the smaller node id: the late node is tried first.
    const a = await cluster.addNode({ NODE_ID: `race-a-${process.pid}`, NODE_ADMIT_REPLY_DELAY_MS: '500' });
    await cluster.addNode({ NODE_ID: `race-b-${process.pid}` });
    lateNode = a.nodeId;
    metricsOf = (id) => cluster.nodeById(id).metricsPort;
    await cluster.waitForLiveNodes(2);
    base = `http://127.0.0.1:${cluster.gateway!.httpPort}`;
    await waitFor(
      async () => ((await (await fetch(`${base}/v1/models`)).json()) as Json).data.some((m: Json) => m.id === MODEL),
      5000,
      'the model at the gateway',
    );
  });

  afterAll(async () => {
    await cluster?.stop();
  });

  it('streams the retried attempt to the end and cancels the one that admitted late', async () => {
    const res = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, stream: true, max_tokens: MAX_TOKENS, seed: 7, messages: [{ role: 'user', content: 'race' }] }),
    });
    expect(res.status).toBe(200);
    const frames = (await res.text()).split('\n\n').filter((f) => f.length > 0);
    const chunks = frames.filter((f) => f !== 'data: [DONE]').map((f) => JSON.parse(f.slice('data: '.length)) as Json);
    expect(frames.at(-1)).toBe('data: [DONE]');
    expect(chunks.filter((c) => c.error)).toEqual([]);
    expect(chunks.at(-1)).toMatchObject({ choices: [{ finish_reason: 'length' }], usage: { completion_tokens: MAX_TOKENS } });

    // Node A ran the abandoned attempt: it is stopped (silently), not left generating into a dead inbox.
    const port = metricsOf(lateNode);
    await waitFor(
      async () => (await scrape(port, 'mnemo_node_cancelled_total{reason="abandoned"}')) === 1,
      2000,
      'the late attempt abandoned on A',
    );
    expect(await scrape(port, 'mnemo_node_running_sequences')).toBe(0);
    expect(await scrape(port, 'mnemo_node_generated_tokens_total')).toBeLessThan(MAX_TOKENS);
  });
});
