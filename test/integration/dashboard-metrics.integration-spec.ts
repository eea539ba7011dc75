// The Grafana dashboard against real services: a cluster (gateway, scheduler, and node-managers
// configured for each feature a row watches) runs a small workload — chat requests, advisories
// (one used, one left to expire), a prefetch between nodes, a derived-model request over its base
// model's KV, swap preemption under KV pressure, a node killed under a stream (the gateway fails
// the stream over), a node leaving — and then every metric a
// dashboard query names must be declared on some service's /metrics (ops port) and have samples.
import { createInbox } from '@nats-io/transport-node';
import { chunkKeys } from '@mnemo/kv-core';
import {
  decodeMessage,
  encodeMessage,
  InferenceRequestSchema,
  nodeInferSubject,
  PrefetchReplySchema,
  PrefetchRequestSchema,
  decodeReplyOrError,
  ScheduleReplySchema,
  Subjects,
} from '@mnemo/proto';
import type { NodeManagerHandle } from '../../apps/node-manager/src/bootstrap/app.js';
import { dashboardQueries } from '../../deploy/grafana/lib/dashboard.js';
import { exposedSeries, scrapeMetrics } from '@mnemo/testkit';
import { familyOf, metricNames } from '../../deploy/grafana/lib/promql.js';
import { Cluster, InferenceRun, scrape, waitFor } from './cluster.js';
import { dispatch } from './direct-dispatch.js';

const MODEL = 'mnemo-tiny';
const reference = { NODE_ENGINE: 'reference', NODE_REFERENCE_BACKEND: 'cpu' };
/** 300 tokens: one whole 256-token chunk the KV store writes to its host pool, and a tail. */
const HISTORY = Array.from({ length: 300 }, (_, i) => (i * 37 + 11) % 250);
/** 40-token prompts whose greedy answers on mnemo-tiny run a full 80 tokens (priority-swap spec). */
/** Waits are generous: the machine may be shared and slow, and a wait that times out fails the spec with its name. */
const WAIT_MS = 30_000;
const swapPrompt = (i: number) => Array.from({ length: 40 }, (_, j) => (j * 29 + i * 13 + 3) % 250);

describe('every metric the Grafana dashboard queries is exported, with samples', () => {
  let cluster: Cluster;
  let api: string;
  let droid: NodeManagerHandle;
  let swapper: NodeManagerHandle;
  const failover: NodeManagerHandle[] = [];

  beforeAll(async () => {
    cluster = await Cluster.start({
      nodes: 0,
      gateway: true,
      schedulerEnv: { SCHEDULER_POLICY: 'symphony', SCHEDULER_ADVISORY_TTL_MS: '500' },
    });
    api = `http://127.0.0.1:${cluster.gateway!.httpPort}`;
    // A DroidSpeak pair (base and derived model) with KV tiers.
    droid = await cluster.addNode({ ...reference, NODE_MODELS: `${MODEL},mnemo-tiny-ft`, NODE_KV_BLOCKS: '128' });
    // Few device blocks, priority scheduling, swap preemption (FastSwitch).
    // A per-chunk peer deadline for a loaded machine: the prefetch below must not time out.
    swapper = await cluster.addNode({
      ...reference,
      NODE_PEER_DEADLINE_BASE_MS: '10000',
      NODE_MODELS: MODEL,
      NODE_KV_BLOCKS: '8',
      NODE_MAX_BATCH: '4',
      NODE_SCHEDULING: 'priority',
      NODE_PREEMPTION: 'swap',
      NODE_BLOCK_GROUP_BLOCKS: '4',
    });
    // Two models on one device budget lending each other elastic units (SwiftCache).
    await cluster.addNode({
      ...reference,
      NODE_MODELS: `${MODEL},mnemo-tiny-qwen3`,
      NODE_KV_DEVICE_BYTES: '256KiB',
      NODE_KV_ELASTIC_TICK_MS: '50',
    });
    // Two sim nodes that alone serve mnemo-small, slow enough to die under a stream (failover).
    for (let i = 0; i < 2; i++)
      failover.push(
        await cluster.addNode({ NODE_ENGINE: 'sim', NODE_MODELS: 'mnemo-small', NODE_KV_STORE: 'off', NODE_SIM_DECODE_STEP_MS: '50' }),
      );
    await cluster.waitForLiveNodes(5, WAIT_MS);
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  const post = async (path: string, body: unknown) => {
    const res = await fetch(api + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  };
  const complete = (sessionId: string, prompt: number[]) =>
    post('/v1/completions', { model: MODEL, prompt, max_tokens: 4, temperature: 0, session_id: sessionId });

  /** Sends a greedy request of `maxTokens` straight to a node (priority scheduling sees `priority`). */
  async function direct(nodeId: string, tokens: number[], maxTokens: number, priority: number): Promise<void> {
    const replySubject = createInbox();
    const run = new InferenceRun(cluster.nc, replySubject, 120_000);
    await cluster.nc.flush();
    const requestId = `dash-${Math.random().toString(36).slice(2)}`;
    const req = encodeMessage(InferenceRequestSchema, {
      requestId,
      tenant: 'itest',
      model: MODEL,
      tokens,
      chunkKeys: chunkKeys(MODEL, 'itest', tokens),
      priority,
      sampling: { temperature: 0, topP: 1, maxTokens, seed: 1n },
      replySubject,
      attempt: 1,
    });
    const reply = decodeMessage(ScheduleReplySchema, (await cluster.nc.request(nodeInferSubject(nodeId), req, { timeout: 10_000 })).data);
    if (reply.result.case !== 'nodeId') throw new Error(`refused: ${JSON.stringify(reply.result.value)}`);
    run.requestId = requestId;
    await run.done();
    run.close();
  }

  /** Every service's /metrics, merged: declared families and series with samples. */
  async function exposition() {
    const ports = [
      cluster.gateway!.metricsPort,
      ...cluster.schedulers.map((s) => s.metricsPort),
      ...cluster.nodes.map((n) => n.metricsPort),
    ];
    const pages = await Promise.all(ports.map(async (p) => exposedSeries(await scrapeMetrics(p, 10_000))));
    return { types: new Map(pages.flatMap((p) => [...p.types])), sampled: new Set(pages.flatMap((p) => [...p.sampled])) };
  }

  it('after a small workload, no panel reads a metric that is missing or empty', async () => {
    // Chat through the gateway (TTFT, TPOT, dispatches); sessions for the advisories.
    for (const s of ['s-used', 's-idle', 's-plain']) expect((await complete(s, HISTORY.slice(0, 40))).status).toBe(200);
    // An advisory whose request comes (judged by the node it lands on, or as moved), and one left to expire (spurious).
    expect((await post('/v1/advisories', { session_id: 's-used', model: MODEL })).status).toBe(201);
    expect((await post('/v1/advisories', { session_id: 's-idle', model: MODEL })).status).toBe(201);
    expect((await complete('s-used', [...HISTORY.slice(0, 40), 9, 9])).status).toBe(200);
    const sched = cluster.schedulers[0]!.metricsPort;
    await waitFor(
      async () => ((await scrape(sched, 'mnemo_advisory_outcomes_total{outcome="spurious"}')) ?? 0) >= 1,
      WAIT_MS,
      'the idle advisory to expire',
      100,
    );

    // The DroidSpeak node caches a base-model prompt; its derived model's request then tries the base KV.
    await dispatch(cluster, droid.nodeId, HISTORY);
    // Every layer of the chunk (256 KiB of mnemo-tiny KV): a peer serves only whole chunks.
    await waitFor(
      async () => ((await scrape(droid.metricsPort, 'mnemo_kv_tier_bytes{tier="host",state="used"}')) ?? 0) >= 256 * 1024,
      WAIT_MS,
      'the base chunk in the host pool',
      50,
    );
    await dispatch(cluster, droid.nodeId, HISTORY, [], 'mnemo-tiny-ft');

    // A prefetch from the DroidSpeak node into the swap node's host pool (a peer link).
    const keys = chunkKeys(MODEL, 'itest', HISTORY);
    const prefetch = encodeMessage(PrefetchRequestSchema, {
      advisoryId: 'dash-1',
      sessionId: 'dash',
      model: MODEL,
      chunkKeys: keys,
      sources: [{ nodeId: droid.nodeId, grpcAddress: droid.grpcAddress, chunkKeys: keys }],
    });
    expect(
      decodeReplyOrError(
        PrefetchReplySchema,
        (await cluster.nc.request(Subjects.nodePrefetch(swapper.nodeId), prefetch, { timeout: 5000 })).data,
      ),
    ).toEqual({ ok: expect.objectContaining({ chunksQueued: 1 }) });
    await waitFor(
      async () => (await scrape(swapper.metricsPort, 'mnemo_kv_peer_link_bytes_total')) !== undefined,
      WAIT_MS,
      'bytes on the link',
      50,
    );

    // KV pressure on the swap node: two low-priority requests, then two high-priority ones preempt them by swapping.
    const low = [4, 5].map((i) => direct(swapper.nodeId, swapPrompt(i), 80, 0));
    await waitFor(async () => ((await scrape(swapper.metricsPort, 'mnemo_node_running_sequences')) ?? 0) >= 2, WAIT_MS, 'two running', 5);
    await Promise.all([...low, ...[7, 8].map((i) => direct(swapper.nodeId, swapPrompt(i), 80, 10))]);

    // A node dies under a stream: the scheduler announces it, the gateway continues the stream on the other node.
    const res = await fetch(`${api}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'mnemo-small',
        prompt: HISTORY.slice(0, 20),
        max_tokens: 60,
        temperature: 0,
        ignore_eos: true,
        stream: true,
      }),
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let sse = '';
    let victim: NodeManagerHandle | undefined;
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      sse += decoder.decode(r.value, { stream: true });
      if (victim || !sse.includes('"choices"')) continue;
      const running = await Promise.all(failover.map(async (n) => (await scrape(n.metricsPort, 'mnemo_node_running_sequences')) ?? 0));
      victim = failover[running.findIndex((x) => x > 0)];
      if (!victim) continue;
      await victim.kill();
      cluster.nodes.splice(cluster.nodes.indexOf(victim), 1);
    }
    expect(victim).toBeDefined();
    expect(sse).toContain('data: [DONE]');
    expect(sse).not.toContain('"error"');

    // A node leaves (failover row).
    const leaving = await cluster.addNode();
    await cluster.waitForLiveNodes(5, WAIT_MS);
    await leaving.stop();
    cluster.nodes.splice(cluster.nodes.indexOf(leaving), 1);
    await waitFor(async () => (await scrape(sched, 'mnemo_scheduler_nodes_dropped_total')) !== undefined, WAIT_MS, 'the node dropped', 50);

    const { types, sampled } = await exposition();
    const problems: string[] = [];
    for (const { panel, expr } of dashboardQueries()) {
      for (const series of metricNames(expr)) {
        if (!types.has(familyOf(series, types))) problems.push(`${panel}: ${series} is not exported by any service`);
        else if (!sampled.has(series)) problems.push(`${panel}: ${series} has no samples`);
      }
    }
    expect([...new Set(problems)]).toEqual([]);
  }, 240_000);
});
