// DroidSpeak routing: the scheduler routes a derived model's request on its base model's chunk
// keys (same tokens, same tenant salt) when a node holds the base's KV, and stamps kv_sources, so
// a node that holds nothing of the prompt fetches the base's KV from the peer and reuses it.
// Real profiler (Postgres), NATS, scheduler and two reference-engine nodes.
import { chunkKeys } from '@mnemo/kv-core';
import { decodeMessage, encodeMessage, KvEventSchema, KvTier, RegisterModelPairRequestSchema, RegisterModelRequestSchema, Subjects, type KvEvent } from '@mnemo/proto';
import { startProfiler, type ProfilerHandle } from '../../apps/profiler/src/app.js';
import type { NodeManagerHandle } from '../../apps/node-manager/src/app.js';
import { Cluster, scrape, type InferenceRun } from './cluster.js';
import { dispatch, keepBusy } from './direct-dispatch.js';

const BASE = 'mnemo-tiny';
const DERIVED = 'mnemo-tiny-ft';
let promptSeed = 100;
const freshPrompt = () => {
  const s = ++promptSeed;
  return Array.from({ length: 300 }, (_, i) => (i * 37 + s * 11 + 5) % 250);
};

describe('DroidSpeak routing on the base model’s KV', () => {
  let profiler: ProfilerHandle;
  let cluster: Cluster;
  let n1: NodeManagerHandle;
  let n2: NodeManagerHandle;
  const events: KvEvent[] = [];

  beforeAll(async () => {
    profiler = await startProfiler({ ...process.env, METRICS_PORT: '0', HTTP_PORT: '0', LOG_LEVEL: 'warn', PROFILER_JOB_POLL_MS: '200' });
    const nodeEnv = { NODE_ENGINE: 'reference', NODE_REFERENCE_BACKEND: 'cpu', NODE_KV_BLOCKS: '512', NODE_MODELS: `${BASE},${DERIVED}`, NODE_KV_EVENTS_MS: '20', NODE_DROIDSPEAK_MAX_LOSS_BP: '10000' };
    cluster = await Cluster.start({ nodes: 0, schedulerEnv: { SCHEDULER_DROIDSPEAK_BASES: `${DERIVED}=${BASE}` }, nodeEnv });
    const sub = cluster.nc.subscribe(Subjects.KV_EVENTS);
    void (async () => {
      for await (const m of sub) events.push(decodeMessage(KvEventSchema, m.data));
    })();
    n1 = await cluster.addNode({ NODE_ID: `dsr-1-${process.pid}` });
    n2 = await cluster.addNode({ NODE_ID: `dsr-2-${process.pid}` });
    await cluster.waitForLiveNodes(2);
    const reg = (init: Record<string, unknown>) => cluster.nc.request(Subjects.PROFILER_MODELS_REGISTER, encodeMessage(RegisterModelRequestSchema, init));
    await reg({ id: BASE, architecture: 'mnemo-llama', numLayers: 4 });
    await reg({ id: DERIVED, architecture: 'mnemo-llama', numLayers: 4, baseModelId: BASE });
    await cluster.nc.request(Subjects.PROFILER_PAIRS_REGISTER, encodeMessage(RegisterModelPairRequestSchema, { base: BASE, derived: DERIVED }));
    const api = `http://127.0.0.1:${profiler.httpPort}`;
    const res = await fetch(`${api}/v1/profiler/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ base: BASE, derived: DERIVED, continuationTokens: 4, dataset: { kind: 'synthetic', prompts: 2, tokens: 24, seed: 5 } }),
    });
    const { id } = (await res.json()) as { id: string };
    for (;;) {
      const j = (await (await fetch(`${api}/v1/profiler/jobs/${id}`)).json()) as { status: string; error: string | null };
      if (j.status === 'done') break;
      if (j.status === 'failed') throw new Error(j.error ?? 'profiling job failed');
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 300_000);
  afterAll(async () => {
    await cluster?.stop();
    await profiler?.stop();
  });

  /** The base's chunk of `prompt` on n1's host pool, as the KV events (which the scheduler hears too) report. */
  async function cacheOnN1(prompt: number[]): Promise<void> {
    expect((await dispatch(cluster, n1.nodeId, prompt, [], BASE)).error).toBeUndefined();
    const key = chunkKeys(BASE, 'itest', prompt)[0]!;
    const end = Date.now() + 20_000;
    while (!events.some((e) => e.nodeId === n1.nodeId && e.changes.some((c) => c.tier === KvTier.HOST && c.chunkKeys.includes(key)))) {
      if (Date.now() > end) throw new Error('the base chunk never reached n1’s host pool');
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  it('a derived request lands on the idle node, which fetches the base’s KV from the busy one and reuses it', async () => {
    const busy: InferenceRun[] = await keepBusy(cluster, n1.nodeId, 2, BASE);
    try {
      let run: InferenceRun | undefined;
      let usage;
      // n2 learns the pair's frontier on its first derived request (that one is an ordinary prefill): fresh prompts per try.
      for (let attempt = 0; attempt < 6 && !usage?.kvReuse; attempt++) {
        const prompt = freshPrompt();
        await cacheOnN1(prompt);
        run = await cluster.infer({ model: DERIVED, tokens: prompt, chunkKeys: chunkKeys(DERIVED, 'itest', prompt), sampling: { temperature: 0, topP: 1, maxTokens: 4, seed: 1n } }, 60_000);
        expect(run.error).toBeUndefined();
        const evs = await run.done();
        run.close();
        expect(run.nodeId).toBe(n2.nodeId);
        usage = evs.find((e) => e.done)?.usage;
      }
      expect(usage?.kvReuse).toMatchObject({ baseModel: BASE, reusedTokens: 256 });
      expect(await scrape(n2.metricsPort, 'mnemo_kv_peer_restored_tokens_total')).toBeGreaterThanOrEqual(256);
      expect(await scrape(n2.metricsPort, 'mnemo_node_droidspeak_reuse_total{outcome="reused"}')).toBeGreaterThanOrEqual(1);
    } finally {
      for (const b of busy) {
        cluster.cancel(b.nodeId!, b.requestId);
        b.close();
      }
    }
  }, 180_000);
});
