// The gateway's front door without any inference node: ops endpoints, auth, body limits,
// malformed requests, gRPC surface. Real NATS, the real scheduler, the real gateway.
import { credentials, Metadata, status, type Client, type ServiceError } from '@grpc/grpc-js';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { loadGrpcServices, Subjects } from '@mnemo/proto';
import { gatewayCluster, natsUrl, type Cluster } from './cluster.js';

const KEY = 'sk-test-ops';

describe('gateway (no nodes)', () => {
  const started = gatewayCluster({ nodes: 0, gatewayEnv: { MNEMO_API_KEYS: `${KEY},sk-other`, GATEWAY_MAX_BODY_BYTES: '4096' } });
  let gateway: NonNullable<Cluster['gateway']>;
  let base: string;
  let nc: NatsConnection;
  let scheduled = 0;

  beforeAll(async () => {
    gateway = started.cluster.gateway!;
    base = started.base;
    // Watches the schedule subject: no rejected request may get this far.
    nc = await connect({ servers: natsUrl() });
    nc.subscribe(Subjects.SCHEDULE, { callback: () => void scheduled++ });
    await nc.flush();
  });

  afterAll(async () => {
    await nc?.close();
  });

  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(base + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', ...headers },
      body,
    });

  it('answers /healthz and /readyz on its ops port, and none of the ops endpoints on the public one', async () => {
    const ops = `http://127.0.0.1:${gateway.metricsPort}`;
    expect(await (await fetch(`${ops}/healthz`)).json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${ops}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready' });
    for (const path of ['/metrics', '/healthz', '/readyz']) expect((await fetch(`${base}${path}`)).status).toBe(404);
  });

  it('requires the API key on /v1 and says so in the OpenAI error shape', async () => {
    for (const auth of [undefined, 'Bearer wrong', 'sk-test-ops']) {
      const res = await fetch(`${base}/v1/models`, { headers: auth ? { authorization: auth } : {} });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
      expect(await res.json()).toEqual({
        error: { message: expect.any(String), type: 'authentication_error', param: null, code: 'unauthenticated' },
      });
    }
  });

  it('lists no models while no node serves any', async () => {
    const res = await fetch(`${base}/v1/models`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ object: 'list', data: [] });
  });

  const rejected: Array<[string, string, string, number, string]> = [
    ['malformed JSON', '/v1/chat/completions', '{"model": "m", "messages": [', 400, 'invalid_request'],
    ['a JSON array body', '/v1/chat/completions', '[1]', 400, 'invalid_request'],
    ['an empty body', '/v1/completions', '', 400, 'invalid_request'],
    ['missing messages', '/v1/chat/completions', '{"model": "mnemo-tiny"}', 400, 'invalid_request'],
    ['messages not an array', '/v1/chat/completions', '{"model": "mnemo-tiny", "messages": {}}', 400, 'invalid_request'],
    [
      'an invalid role',
      '/v1/chat/completions',
      '{"model": "mnemo-tiny", "messages": [{"role": "robot", "content": "x"}]}',
      400,
      'invalid_request',
    ],
    ['temperature out of range', '/v1/completions', '{"model": "mnemo-tiny", "prompt": "x", "temperature": 3}', 400, 'invalid_request'],
    // With no node registered nobody can say a model does not exist: 503, to retry (with nodes it is a 404: gateway-inference).
    [
      'a model while no node serves any',
      '/v1/chat/completions',
      '{"model": "no-such-model", "messages": [{"role": "user", "content": "x"}]}',
      503,
      'no_node_available',
    ],
    ['an oversize body', '/v1/completions', JSON.stringify({ model: 'mnemo-tiny', prompt: 'x'.repeat(10_000) }), 413, 'request_too_large'],
  ];
  it.each(rejected)('rejects %s in the OpenAI error shape without scheduling anything', async (_name, path, body, statusCode, code) => {
    const before = scheduled;
    const res = await post(path, body);
    expect(res.status).toBe(statusCode);
    const json = (await res.json()) as { error: Record<string, unknown> };
    expect(Object.keys(json.error).sort()).toEqual(['code', 'message', 'param', 'type']);
    expect(json.error.code).toBe(code);
    await nc.flush();
    expect(scheduled).toBe(before);
  });

  it('answers unknown routes with 404 in the OpenAI shape', async () => {
    const res = await fetch(`${base}/v1/nothing`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { type: 'not_found_error', code: 'not_found' } });
  });

  it('counts rejected requests in /metrics', async () => {
    const text = await (await fetch(`http://127.0.0.1:${gateway.metricsPort}/metrics`)).text();
    expect(text).toMatch(/mnemo_requests_total\{[^}]*operation="chat.completions"[^}]*outcome="invalid_request"[^}]*\} [1-9]/);
    expect(text).toMatch(/mnemo_requests_total\{[^}]*operation="chat.completions"[^}]*outcome="no_node_available"[^}]*\} [1-9]/);
    expect(text).toContain('mnemo_time_to_first_token_seconds');
  });

  describe('gRPC', () => {
    let client: Client & Record<string, (...args: unknown[]) => unknown>;
    const auth = () => {
      const m = new Metadata();
      m.set('authorization', `Bearer ${KEY}`);
      return m;
    };
    beforeAll(() => {
      const Gateway = loadGrpcServices().clients.Gateway;
      client = new Gateway(`127.0.0.1:${gateway.grpcPort}`, credentials.createInsecure()) as typeof client;
    });
    afterAll(() => client?.close());

    const inferError = (req: object, md: Metadata) =>
      new Promise<ServiceError>((resolve, reject) => {
        const call = client.Infer(req, md) as NodeJS.EventEmitter;
        call.on('data', () => reject(new Error('unexpected data')));
        call.on('error', (e: ServiceError) => resolve(e));
        call.on('end', () => reject(new Error('stream ended without an error')));
      });

    it.each([
      ['no API key', { model: 'mnemo-tiny', prompt: 'x' }, false, status.UNAUTHENTICATED],
      ['a model while no node serves any', { model: 'no-such-model', prompt: 'x' }, true, status.UNAVAILABLE],
      ['top_p out of range', { model: 'mnemo-tiny', prompt: 'x', topP: 2 }, true, status.INVALID_ARGUMENT],
      [
        'prompt and messages both set',
        { model: 'mnemo-tiny', prompt: 'x', messages: [{ role: 'user', content: 'y' }] },
        true,
        status.INVALID_ARGUMENT,
      ],
    ])('Infer fails with %s', async (_name, req, withKey, code) => {
      const before = scheduled;
      const err = await inferError(req, withKey ? auth() : new Metadata());
      expect(err.code).toBe(code);
      await nc.flush();
      expect(scheduled).toBe(before);
    });

    it.each<[string, object, boolean, number]>([
      ['Advise', {}, true, status.INVALID_ARGUMENT],
      ['Advise', { sessionId: 's', model: 'mnemo-tiny' }, false, status.UNAUTHENTICATED],
      ['Advise', { sessionId: 'never-seen', model: 'mnemo-tiny' }, true, status.NOT_FOUND],
      ['Invalidate', {}, true, status.INVALID_ARGUMENT],
      ['Invalidate', { advisoryId: 'adv-unknown' }, true, status.NOT_FOUND],
      ['DeleteSession', {}, true, status.INVALID_ARGUMENT],
      ['DeleteSession', { sessionId: 'never-seen' }, true, status.NOT_FOUND],
    ])('%s(%j) fails cleanly', async (method, req, withKey, code) => {
      const err = await new Promise<ServiceError | null>((resolve) =>
        client[method]!(req, withKey ? auth() : new Metadata(), (e: ServiceError | null) => resolve(e)),
      );
      expect(err?.code).toBe(code);
    });
  });
});
