// Issue 29 item 5: advisories are rate-limited per tenant at the gateway (kv-core
// TenantRateLimiter): past its burst a tenant gets 429 with Retry-After and a clear message,
// another tenant is unaffected, bad input spends nothing, and a refill lets the tenant in again.
import { Cluster, scrape } from './cluster.js';

const MODEL = 'mnemo-tiny';
const A = 'sk-rate-a';
const B = 'sk-rate-b';
const PROMPT = 'An advisory tells the scheduler a session comes back; each one makes a node pull KV. '.repeat(4).slice(0, 300);

describe('advisory rate limit per tenant', () => {
  let cluster: Cluster;
  let base: string;
  const call = async (key: string, method: string, path: string, body?: object) => {
    const res = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body ? JSON.stringify(body) : undefined,
    });
    return {
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      json: (await res.json()) as { error?: { message: string; type: string; code: string } },
    };
  };
  const advise = (key: string, session: string) => call(key, 'POST', '/v1/advisories', { session_id: session, model: MODEL });

  beforeAll(async () => {
    cluster = await Cluster.start({
      nodes: 1,
      gateway: true,
      gatewayEnv: { MNEMO_API_KEYS: `${A},${B}`, GATEWAY_ADVISORY_RATE: '1', GATEWAY_ADVISORY_BURST: '3' },
      schedulerEnv: { SCHEDULER_POLICY: 'symphony' },
      nodeEnv: { NODE_ENGINE: 'sim', NODE_KV_BLOCKS: '256', NODE_MODELS: MODEL },
    });
    base = `http://127.0.0.1:${cluster.gateway!.httpPort}`;
    for (const key of [A, B])
      expect((await call(key, 'POST', '/v1/completions', { model: MODEL, prompt: PROMPT, max_tokens: 2, session_id: 'chat' })).status).toBe(
        200,
      );
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('lets a burst through, then answers 429 with Retry-After; another tenant is unaffected; a refill lets one more in', async () => {
    // Bad input is refused before the limiter: it spends none of the burst.
    expect((await call(A, 'POST', '/v1/advisories', { model: MODEL })).status).toBe(400);
    const burst = [await advise(A, 'chat'), await advise(A, 'chat'), await advise(A, 'chat')];
    expect(burst.map((r) => r.status)).toEqual([201, 201, 201]);
    const refused = await advise(A, 'chat');
    expect(refused.status).toBe(429);
    expect(refused.retryAfter).toBe('1');
    expect(refused.json.error).toMatchObject({ type: 'rate_limit_error', code: 'overloaded' });
    expect(refused.json.error!.message).toMatch(
      /advisory rate limit exceeded for this tenant \(1 per second, bursts of 3\): retry in \d+ ms/,
    );
    expect((await advise(B, 'chat')).status).toBe(201);
    expect(await scrape(cluster.gateway!.metricsPort, 'mnemo_gateway_advisories_rate_limited_total')).toBe(1);
    await new Promise((r) => setTimeout(r, 1100));
    expect((await advise(A, 'chat')).status).toBe(201);
    expect((await advise(A, 'chat')).status).toBe(429);
  });
});
