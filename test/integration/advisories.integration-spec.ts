// Symphony control half, end to end on real services (gateway + scheduler + sim nodes on real
// NATS): sessions are learnt from requests, an advisory reserves a node and sends it a
// PrefetchRequest naming the session's chunks, the session's next request lands on the reserved
// node, invalidation frees the reservation and tells the node, and bad input gets clear 4xx.
// The node's prefetch handler belongs to the node half (symphony-node); here the test listens
// on the contract subjects to see what the scheduler sends, without answering.
import { connect, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import {
  decodeMessage,
  ForgetRequestSchema,
  PrefetchRequestSchema,
  Subjects,
  type ForgetRequest,
  type PrefetchRequest,
} from '@mnemo/proto';
import { Cluster, gatewayCluster, natsUrl, scrape, waitFor } from './cluster.js';

const MODEL = 'mnemo-tiny';
const KEY = 'sk-adv-a';
const OTHER = 'sk-adv-b';
/** 300 bytes → 300 byte-tokens: one whole 256-token chunk. */
const PROMPT = 'The quick brown fox jumps over the lazy dog while the KV cache moves ahead of the request. '.repeat(4).slice(0, 300);

interface Json {
  [k: string]: unknown;
}

function client(base: string, key = KEY) {
  const call = async (method: string, path: string, body?: object): Promise<{ status: number; json: Json }> => {
    const res = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, json: (await res.json()) as Json };
  };
  return {
    call,
    complete: (sessionId: string) =>
      call('POST', '/v1/completions', { model: MODEL, prompt: PROMPT, max_tokens: 2, session_id: sessionId }),
  };
}

/** Collects what arrives on a subject. */
class Listener<T> {
  readonly got: T[] = [];
  private readonly sub: Subscription;
  constructor(nc: NatsConnection, subject: string, decode: (d: Uint8Array) => T) {
    this.sub = nc.subscribe(subject, { callback: (_e, m) => void this.got.push(decode(m.data)) });
  }
  close(): void {
    this.sub.unsubscribe();
  }
}

describe('advisories and sessions', () => {
  let cluster: Cluster;
  let base: string;
  let nc: NatsConnection;
  let port: number;
  beforeAll(async () => {
    cluster = await Cluster.start({
      nodes: 2,
      gateway: true,
      gatewayEnv: { MNEMO_API_KEYS: `${KEY},${OTHER}` },
      schedulerEnv: { SCHEDULER_POLICY: 'symphony', SCHEDULER_ADVISORIES_PER_TENANT: '2' },
      nodeEnv: { NODE_ENGINE: 'sim', NODE_KV_BLOCKS: '256', NODE_MODELS: MODEL },
    });
    base = `http://127.0.0.1:${cluster.gateway!.httpPort}`;
    port = cluster.schedulers[0]!.metricsPort;
    nc = await connect({ servers: natsUrl() });
  });
  afterAll(async () => {
    await nc?.close();
    await cluster?.stop();
  });

  it('an advisory reserves a node, sends it the session’s chunks, and the next request lands there', async () => {
    const a = client(base);
    expect((await a.complete('chat-1')).status).toBe(200);
    const session = await a.call('GET', '/v1/sessions/chat-1');
    expect(session).toMatchObject({ status: 200, json: { session_id: 'chat-1', model: MODEL, requests: 1, chunks: 1, advisory: null } });

    const listeners = cluster.nodes.map(
      (n) => new Listener<PrefetchRequest>(nc, Subjects.nodePrefetch(n.nodeId), (d) => decodeMessage(PrefetchRequestSchema, d)),
    );
    await nc.flush();
    const before = Date.now();
    const arrival = Date.now() + 2000;
    const adv = await a.call('POST', '/v1/advisories', {
      session_id: 'chat-1',
      model: MODEL,
      expected_arrival: arrival,
      ordered: true,
      priority: 1,
    });
    expect(adv.status).toBe(201);
    const { advisory_id: id, node, expires_at: expires } = adv.json as { advisory_id: string; node: string; expires_at: number };
    expect(cluster.nodes.map((n) => n.nodeId)).toContain(node);
    expect(expires).toBeGreaterThan(before + 2000);

    // The reserved node, and only it, was asked to prefetch the session's chunks.
    const target = listeners[cluster.nodes.findIndex((n) => n.nodeId === node)]!;
    await waitFor(() => target.got.length === 1, 5000, 'the PrefetchRequest');
    expect(target.got[0]).toMatchObject({
      advisoryId: id,
      sessionId: 'chat-1',
      model: MODEL,
      priority: 1,
      ordered: true,
      expectedArrivalMs: BigInt(arrival),
      expiresAtMs: BigInt(expires),
    });
    expect(target.got[0]!.chunkKeys).toHaveLength(1);
    expect(listeners.reduce((n, l) => n + l.got.length, 0)).toBe(1);
    for (const l of listeners) l.close();

    expect((await a.call('GET', '/v1/sessions/chat-1')).json.advisory).toMatchObject({ advisory_id: id, node });
    expect((await a.complete('chat-1')).status).toBe(200);
    expect(await scrape(port, 'mnemo_scheduler_reservations_used_total{outcome="hit"}')).toBe(1);
    const after = await a.call('GET', '/v1/sessions/chat-1');
    expect(after.json).toMatchObject({ node, requests: 2, advisory: null });
  });

  it('invalidation frees the reservation and tells its node; a second one is a 404', async () => {
    const a = client(base);
    const adv = await a.call('POST', '/v1/advisories', { session_id: 'chat-1', model: MODEL });
    const { advisory_id: id, node } = adv.json as { advisory_id: string; node: string };
    const forget = new Listener<ForgetRequest>(nc, Subjects.nodeForget(node), (d) => decodeMessage(ForgetRequestSchema, d));
    await nc.flush();
    expect(await a.call('DELETE', `/v1/advisories/${id}`)).toEqual({ status: 200, json: { advisory_id: id, deleted: true } });
    await waitFor(() => forget.got.length === 1, 5000, 'the ForgetRequest');
    expect(forget.got[0]).toMatchObject({ advisoryId: id, sessionId: 'chat-1' });
    forget.close();
    expect((await a.call('GET', '/v1/sessions/chat-1')).json.advisory).toBeNull();
    const again = await a.call('DELETE', `/v1/advisories/${id}`);
    expect(again.status).toBe(404);
    expect(await scrape(port, 'mnemo_scheduler_reservations')).toBe(0);
  });

  it.each<[string, string, string, object | undefined, number, string]>([
    ['an unknown session', 'POST', '/v1/advisories', { session_id: 'nobody', model: MODEL }, 404, 'not_found'],
    ['a missing session_id', 'POST', '/v1/advisories', { model: MODEL }, 400, 'invalid_request'],
    [
      'a non-numeric expected_arrival',
      'POST',
      '/v1/advisories',
      { session_id: 'chat-1', model: MODEL, expected_arrival: 'soon' },
      400,
      'invalid_request',
    ],
    ['the wrong model for the session', 'POST', '/v1/advisories', { session_id: 'chat-1', model: 'other-model' }, 400, 'invalid_request'],
    ['an unknown advisory id', 'DELETE', '/v1/advisories/adv-nope', undefined, 404, 'not_found'],
    ['an unknown session (GET)', 'GET', '/v1/sessions/nobody', undefined, 404, 'not_found'],
  ])('%s → %s', async (_n, method, path, body, status, code) => {
    const res = await client(base).call(method, path, body);
    expect(res.status).toBe(status);
    expect((res.json.error as Json).code).toBe(code);
  });

  it('keeps tenants apart: another key sees no session and cannot advise for it', async () => {
    const b = client(base, OTHER);
    expect((await b.call('GET', '/v1/sessions/chat-1')).status).toBe(404);
    expect((await b.call('POST', '/v1/advisories', { session_id: 'chat-1', model: MODEL })).status).toBe(404);
  });

  it('a flood of advisories from one tenant gets 429 past its limit, and re-advising a session is not a flood', async () => {
    const a = client(base);
    for (const s of ['flood-1', 'flood-2', 'flood-3']) expect((await a.complete(s)).status).toBe(200);
    expect((await a.call('POST', '/v1/advisories', { session_id: 'flood-1', model: MODEL })).status).toBe(201);
    expect((await a.call('POST', '/v1/advisories', { session_id: 'flood-2', model: MODEL })).status).toBe(201);
    expect((await a.call('POST', '/v1/advisories', { session_id: 'flood-2', model: MODEL })).status).toBe(201);
    const third = await a.call('POST', '/v1/advisories', { session_id: 'flood-3', model: MODEL });
    expect(third.status).toBe(429);
    expect((third.json.error as Json).message).toMatch(/too many advisories/);
    // Requests are never limited by advisories.
    expect((await a.complete('flood-3')).status).toBe(200);
  });

  it('DELETE /v1/sessions/{id} forgets the session everywhere, tells every node, and a second one is a 404', async () => {
    const a = client(base);
    const forgets = cluster.nodes.map(
      (n) => new Listener<ForgetRequest>(nc, Subjects.nodeForget(n.nodeId), (d) => decodeMessage(ForgetRequestSchema, d)),
    );
    await nc.flush();
    expect(await a.call('DELETE', '/v1/sessions/flood-1')).toEqual({
      status: 200,
      json: { session_id: 'flood-1', deleted: true, freed_chunks: 0, nodes_told: 2 },
    });
    await waitFor(() => forgets.every((f) => f.got.length === 1), 5000, 'a ForgetRequest on every node');
    for (const f of forgets) expect(f.got.map((g) => g.sessionId)).toEqual(['flood-1']);
    for (const f of forgets) f.close();
    expect((await a.call('GET', '/v1/sessions/flood-1')).status).toBe(404);
    expect((await a.call('DELETE', '/v1/sessions/flood-1')).status).toBe(404);
    expect((await a.call('POST', '/v1/advisories', { session_id: 'flood-1', model: MODEL })).status).toBe(404);
  });
});

describe('advisory expiry', () => {
  const gw = gatewayCluster({
    nodes: 1,
    schedulerEnv: { SCHEDULER_ADVISORY_TTL_MS: '300' },
    nodeEnv: { NODE_ENGINE: 'sim', NODE_KV_BLOCKS: '256', NODE_MODELS: MODEL },
  });

  it('an expired advisory id gets a 404 that says it expired', async () => {
    const a = client(gw.base, 'unused');
    expect((await a.complete('s')).status).toBe(200);
    const { advisory_id: id, expires_at: expires } = (await a.call('POST', '/v1/advisories', { session_id: 's', model: MODEL })).json as {
      advisory_id: string;
      expires_at: number;
    };
    await new Promise((r) => setTimeout(r, Math.max(0, expires - Date.now()) + 50));
    const res = await a.call('DELETE', `/v1/advisories/${id}`);
    expect(res.status).toBe(404);
    expect((res.json.error as Json).message).toMatch(/expired/);
  });
});
