// DroidSpeak routing: the scheduler routes a derived model's request on its base model's chunk
// keys (same tokens, same tenant salt) when a node holds the base's KV, and stamps kv_sources, so
// a node that holds nothing of the prompt fetches the base's KV from the peer and reuses it.
// Real profiler (Postgres), NATS, scheduler and two reference-engine nodes.
import { chunkKeys, eCacheKeys } from '@mnemo/kv-core';
import { decodeMessage, encodeMessage, PlanReplySchema, PlanRequestSchema, Subjects, type Usage } from '@mnemo/proto';
import type { NodeManagerHandle } from '../../apps/node-manager/src/bootstrap/app.js';
import { startDroidSpeakCluster, type DroidSpeakCluster } from './profiler-job.js';
import type { KvEventLog } from './kv-events.js';
import { scrape, type Cluster } from './cluster.js';
import { dispatch, keepBusy } from './direct-dispatch.js';

const BASE = 'mnemo-tiny';
const DERIVED = 'mnemo-tiny-ft';
let promptSeed = 100;
const freshPrompt = () => {
  const s = ++promptSeed;
  return Array.from({ length: 300 }, (_, i) => (i * 37 + s * 11 + 5) % 250);
};

describe('DroidSpeak routing on the base model’s KV', () => {
  let ds: DroidSpeakCluster;
  let cluster: Cluster;
  let n1: NodeManagerHandle;
  let n2: NodeManagerHandle;
  let kv: KvEventLog;

  beforeAll(async () => {
    ds = await startDroidSpeakCluster({
      base: BASE,
      derived: DERIVED,
      kvBlocks: 512,
      // One sequence at a time: the busy node's extra requests queue (routing prices queued requests, not decoding ones).
      nodeEnv: { NODE_MAX_BATCH: '1' },
      nodeIds: [`dsr-1-${process.pid}`, `dsr-2-${process.pid}`],
      cluster: { schedulerEnv: { SCHEDULER_DROIDSPEAK_BASES: `${DERIVED}=${BASE}` } },
    });
    ({ cluster, kv } = ds);
    [n1, n2] = ds.nodes as [NodeManagerHandle, NodeManagerHandle];
  }, 300_000);
  afterAll(async () => {
    await ds?.stop();
  });

  const profile = (base: string, derived: string, layers: number) => ds.profile(base, derived, layers);

  /** The base's chunk of `prompt` on the node's host pool, as the KV events (which the scheduler hears too) report. */
  async function cacheOn(node: NodeManagerHandle, prompt: number[], base = BASE): Promise<void> {
    expect((await dispatch(cluster, node.nodeId, prompt, [], base)).error).toBeUndefined();
    expect(await kv.untilInHost(node.nodeId, chunkKeys(base, 'itest', prompt)[0]!)).toBe(true);
  }

  /**
   * Runs `fn` while `node` is busy with queued base requests, so that routing sends the derived
   * request elsewhere. The busy node caps its batch at one, so anything sent to it afterwards
   * waits out the busy requests: caching the next prompt on it comes before, not during.
   */
  async function whileBusy<T>(node: NodeManagerHandle, model: string, fn: () => Promise<T>): Promise<T> {
    const busy = await keepBusy(cluster, node.nodeId, 4, model);
    try {
      return await fn();
    } finally {
      busy.stop();
    }
  }

  /** A greedy 4-token request of `model` through the scheduler: where it ran and its usage. */
  async function inferDerived(model: string, prompt: number[]): Promise<{ nodeId?: string; usage?: Usage }> {
    const run = await cluster.infer(
      {
        model,
        tokens: prompt,
        chunkKeys: chunkKeys(model, 'itest', prompt),
        sampling: { temperature: 0, topP: 1, maxTokens: 4, seed: 1n },
      },
      60_000,
    );
    try {
      expect(run.error).toBeUndefined();
      const evs = await run.done();
      return { nodeId: run.nodeId, usage: evs.find((e) => e.done)?.usage };
    } finally {
      run.close();
    }
  }

  it('a derived request lands on the idle node, which fetches the base’s KV from the busy one and reuses it', async () => {
    let usage;
    // n2 learns the pair's frontier on its first derived request (that one is an ordinary prefill): fresh prompts per try.
    for (let attempt = 0; attempt < 6 && !usage?.kvReuse; attempt++) {
      const prompt = freshPrompt();
      await cacheOn(n1, prompt);
      const run = await whileBusy(n1, BASE, () => inferDerived(DERIVED, prompt));
      expect(run.nodeId).toBe(n2.nodeId);
      usage = run.usage;
    }
    expect(usage?.kvReuse).toMatchObject({ baseModel: BASE, reusedTokens: 256 });
    expect(await scrape(n2.metricsPort, 'mnemo_kv_peer_restored_tokens_total')).toBeGreaterThanOrEqual(256);
    expect(await scrape(n2.metricsPort, 'mnemo_node_droidspeak_reuse_total{outcome="reused"}')).toBeGreaterThanOrEqual(1);
  }, 180_000);

  it('with a transition-layer plan, the idle node takes the E cache from the peer too and runs the plan unwidened', async () => {
    // mnemo-small-ds24: the profiled plan at a 1% floor recomputes a band from the base's E cache.
    await profile('mnemo-small', 'mnemo-small-ds24', 6);
    const env = { NODE_MODELS: 'mnemo-small,mnemo-small-ds24', NODE_DROIDSPEAK_MAX_LOSS_BP: '100' };
    const m1 = await cluster.addNode({ NODE_ID: `dsr-m1-${process.pid}`, ...env });
    const m2 = await cluster.addNode({ NODE_ID: `dsr-m2-${process.pid}`, ...env });
    await cluster.waitForLiveNodes(4);
    const reply = decodeMessage(
      PlanReplySchema,
      (
        await cluster.nc.request(
          Subjects.PROFILER_PLAN,
          encodeMessage(PlanRequestSchema, { base: 'mnemo-small', derived: 'mnemo-small-ds24', maxQualityLoss: 0.01 }),
          { timeout: 10_000 },
        )
      ).data,
    );
    const chosen = { r1: reply.plan!.pattern!.r1, u1: reply.plan!.pattern!.u1, r2: reply.plan!.pattern!.r2 };
    expect(chosen.r1).toBeLessThan(chosen.u1);
    // m1 keeps E caches once it holds the frontier (fetched on its first base request).
    await cacheOn(m1, freshPrompt(), 'mnemo-small');
    let usage;
    let ranOn: string | undefined;
    for (let attempt = 0; attempt < 6 && usage?.kvReuse?.u1 !== chosen.u1; attempt++) {
      const prompt = freshPrompt();
      await cacheOn(m1, prompt, 'mnemo-small');
      await kv.untilInHost(m1.nodeId, eCacheKeys(chunkKeys('mnemo-small', 'itest', prompt), chosen.u1)[0]!);
      const run = await whileBusy(m1, 'mnemo-small', () => inferDerived('mnemo-small-ds24', prompt));
      ranOn = run.nodeId;
      usage = run.usage;
    }
    expect(ranOn).toBe(m2.nodeId);
    expect(usage?.kvReuse).toMatchObject({ baseModel: 'mnemo-small', ...chosen, reusedTokens: 256 });
    expect(await scrape(m2.metricsPort, 'mnemo_kv_peer_restored_tokens_total')).toBeGreaterThanOrEqual(256);
  }, 300_000);
});
