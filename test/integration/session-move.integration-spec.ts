// Symphony control half, on the reference engine (CPU): an advisory taken while the session's node
// is busy reserves the other node, the session's next turn runs there, and its answer is exactly
// what a fresh computation of the same prompt gives (the moved session recomputes what the new
// node lacks; pulling it from the peer instead is the node half's).
import { chunkKeys } from '@mnemo/kv-core';
import { AdvisoryReplySchema, AdvisoryRequestSchema, decodeMessage, encodeMessage, Subjects } from '@mnemo/proto';
import { ReferenceEngine } from '@mnemo/engine';
import { Cluster, scrape } from './cluster.js';
import { keepBusy } from './direct-dispatch.js';

const MODEL = 'mnemo-tiny';
const TENANT = 'itest';

describe('a session moving between nodes (reference engine)', () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await Cluster.start({
      nodes: 2,
      schedulerEnv: { SCHEDULER_POLICY: 'symphony', SCHEDULER_PEER_FETCH: 'off' },
      nodeEnv: { NODE_ENGINE: 'reference', NODE_REFERENCE_BACKEND: 'cpu', NODE_KV_BLOCKS: '128', NODE_MODELS: MODEL },
    });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('follows its advisory to the other node and answers exactly as a fresh computation', async () => {
    const history = Array.from({ length: 280 }, (_, i) => (i * 29 + 3) % 250);
    const sampling = { temperature: 0, topP: 1, maxTokens: 4, seed: 7n };
    const first = await cluster.infer({ sessionId: 'move', tokens: history, chunkKeys: chunkKeys(MODEL, TENANT, history), sampling });
    await first.done();
    first.close();

    // The session's node gets busy with unrelated long requests sent straight to it (a balancing
    // policy would spread them), and the scheduler has heard its load before the advisory.
    const busy = await keepBusy(cluster, first.nodeId!, 3);
    const payload = encodeMessage(AdvisoryRequestSchema, { tenant: TENANT, sessionId: 'move', model: MODEL });
    const adv = decodeMessage(AdvisoryReplySchema, (await cluster.nc.request(Subjects.ADVISE, payload, { timeout: 5000 })).data);
    expect(adv.result.case).toBe('advisory');
    const reserved = adv.result.case === 'advisory' ? adv.result.value.nodeId : '';
    expect(reserved).not.toBe(first.nodeId);

    const next = [...history, ...first.tokens(), ...Array.from({ length: 20 }, (_, i) => (i * 11 + 5) % 250)];
    const second = await cluster.infer({ sessionId: 'move', tokens: next, chunkKeys: chunkKeys(MODEL, TENANT, next), sampling: { ...sampling, maxTokens: 6 } });
    await second.done();
    second.close();
    busy.stop();
    expect(second.nodeId).toBe(reserved);
    expect(await scrape(cluster.schedulers[0]!.metricsPort, 'mnemo_scheduler_reservations_used_total{outcome="hit"}')).toBe(1);

    const engine = await ReferenceEngine.create({ models: [MODEL], backend: 'cpu', kvBlocks: 64 });
    try {
      const s = { temperature: 0, topP: 1, seed: 7 };
      const tokens = [(await engine.prefill([{ seqId: 'fresh', model: MODEL, tokens: next, sampling: s }]))[0]!.token];
      while (tokens.length < second.tokens().length) tokens.push((await engine.decode(['fresh']))[0]!.token);
      expect(second.tokens()).toEqual(tokens);
    } finally {
      await engine.close();
    }
  });
});
