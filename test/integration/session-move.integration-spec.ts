// Symphony control half, on the reference engine (CPU): an advisory taken while the session's node
// is busy reserves the other node, the session's next turn runs there, and its answer is exactly
// what a fresh computation of the same prompt gives. The advisory's prefetch pulls what the first
// turn left on its node — the whole chunk and the partial chunk past it, whose key only that node
// knew (it reports it when the request ends) — so the moved turn recomputes only its new tokens.
import { chunkKeys } from '@mnemo/kv-core';
import { AdvisoryReplySchema, AdvisoryRequestSchema, decodeMessage, encodeMessage, Subjects } from '@mnemo/proto';
import { ReferenceEngine } from '@mnemo/engine';
import { Cluster, scrape, eventually, referenceNodeEnv } from './cluster.js';
import { keepBusy } from './direct-dispatch.js';

const MODEL = 'mnemo-tiny';

const TENANT = 'itest';

describe('a session moving between nodes (reference engine)', () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await Cluster.start({
      nodes: 2,
      schedulerEnv: { SCHEDULER_POLICY: 'symphony', SCHEDULER_PEER_FETCH: 'on' },
      // One sequence at a time: the busy node's extra requests queue (routing prices queued requests, not decoding ones).
      nodeEnv: referenceNodeEnv(MODEL, 128, { NODE_MAX_BATCH: '1' }),
    });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('follows its advisory to the other node and answers exactly as a fresh computation', async () => {
    // 300 prompt + 8 reply tokens: the KV of 307 (the last token is never fed) is one whole chunk and three 16-token blocks.
    const history = Array.from({ length: 300 }, (_, i) => (i * 29 + 3) % 250);
    const sampling = { temperature: 0, topP: 1, maxTokens: 8, seed: 7n };
    const first = await cluster.infer({ sessionId: 'move', tokens: history, chunkKeys: chunkKeys(MODEL, TENANT, history), sampling });
    await first.done();
    first.close();
    expect(first.tokens()).toHaveLength(8);
    // The node's report of what the turn left reached the scheduler's session table.
    await eventually(
      async () => (await scrape(cluster.schedulers[0]!.metricsPort, 'mnemo_scheduler_session_tails_total{outcome="applied"}')) === 1,
      'the session tail',
    );

    // The session's node gets busy with unrelated long requests sent straight to it (a balancing
    // policy would spread them), and the scheduler has heard its load before the advisory.
    const busy = await keepBusy(cluster, first.nodeId!, 5);
    const payload = encodeMessage(AdvisoryRequestSchema, { tenant: TENANT, sessionId: 'move', model: MODEL });
    const adv = decodeMessage(AdvisoryReplySchema, (await cluster.nc.request(Subjects.ADVISE, payload, { timeout: 5000 })).data);
    expect(adv.result.case).toBe('advisory');
    const reserved = adv.result.case === 'advisory' ? adv.result.value.nodeId : '';
    expect(reserved).not.toBe(first.nodeId);
    const reservedNode = cluster.nodes.find((n) => n.nodeId === reserved)!;
    await eventually(
      async () => (await scrape(reservedNode.metricsPort, 'mnemo_kv_prefetch_chunks_total')) === 2,
      'the whole and the partial chunk to be prefetched',
    );

    const next = [...history, ...first.tokens(), ...Array.from({ length: 20 }, (_, i) => (i * 11 + 5) % 250)];
    const second = await cluster.infer({
      sessionId: 'move',
      tokens: next,
      chunkKeys: chunkKeys(MODEL, TENANT, next),
      sampling: { ...sampling, maxTokens: 6 },
    });
    const events = await second.done();
    second.close();
    busy.stop();
    expect(second.nodeId).toBe(reserved);
    // Everything the first turn left came from what the reserved node prefetched (a whole and a
    // partial chunk, promoted to its device): 256 + 48 tokens.
    expect(events.find((e) => e.done)?.usage?.cachedTokens).toBe(304);
    expect(await scrape(reservedNode.metricsPort, 'mnemo_kv_peer_restores_total')).toBe(0);
    expect(await scrape(cluster.schedulers[0]!.metricsPort, 'mnemo_scheduler_reservations_used_total{outcome="hit"}')).toBe(1);
    // The reserved node judged the advisory when the turn arrived: every chunk it pulled was there.
    expect(await scrape(reservedNode.metricsPort, 'mnemo_advisory_outcomes_total{outcome="hit",reason="found"}')).toBe(1);
    expect(await scrape(cluster.schedulers[0]!.metricsPort, 'mnemo_advisory_outcomes_total')).toBeUndefined();

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
