// `why` end to end: GET /v1/requests/{id}/kv explains a device hit, a chunk evicted by the
// device cache's LRU (with when), and a miss caused by tenant isolation — told only to an admin.
// One sim node with a small device prefix cache, so what is kept and evicted is deterministic.
import { gatewayCluster } from './cluster.js';

const KEYS = { alice: 'key-alice', bob: 'key-bob', admin: 'key-admin' };
const tokens = (n: number, seed: number) => Array.from({ length: n }, (_, i) => 1 + ((seed * 31 + i * 17) % 250));
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('why a prompt hit or missed (GET /v1/requests/{id}/kv)', () => {
  const gw = gatewayCluster({
    nodes: 1,
    // 40 cached blocks: one 600-token prompt (37 blocks) stays, a second one pushes the first out.
    nodeEnv: { NODE_PREFIX_CACHE_BLOCKS: '40' },
    gatewayEnv: { MNEMO_API_KEYS: `${KEYS.alice},${KEYS.bob}`, MNEMO_ADMIN_KEYS: KEYS.admin },
  });

  const complete = async (key: string, prompt: number[]): Promise<string> => {
    const r = await fetch(`${gw.base}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: 'mnemo-tiny', prompt, max_tokens: 1, temperature: 0 }),
    });
    expect(r.status).toBe(200);
    return ((await r.json()) as Json).id as string;
  };
  const why = async (key: string, id: string, admin?: string) => {
    const r = await fetch(`${gw.base}/v1/requests/${id}/kv`, {
      headers: { authorization: `Bearer ${key}`, ...(admin ? { 'x-admin-key': admin } : {}) },
    });
    return { status: r.status, requestId: r.headers.get('x-request-id'), body: (await r.json()) as Json };
  };
  const chunk = (body: Json, i: number) => body.chunks.find((c: Json) => c.index === i && c.start === i * 256);
  // Node events reach the scheduler's directory on their batch period.
  const settle = () => new Promise((r) => setTimeout(r, 400));

  it('explains a device hit, an eviction by the device LRU, and a tenant-isolated miss', async () => {
    const P = tokens(600, 1);
    const R = tokens(600, 2);
    const first = await complete(KEYS.alice, P);
    await settle();
    const hit = await complete(KEYS.alice, P);
    const w1 = await why(KEYS.alice, first);
    expect(w1.status).toBe(200);
    expect(w1.requestId).toBe(first.replace(/^cmpl-/, ''));
    expect(chunk(w1.body, 0)).toMatchObject({ source: 'computed', reason: 'never_stored' });
    const w2 = await why(KEYS.alice, hit);
    expect([chunk(w2.body, 0).source, chunk(w2.body, 1).source]).toEqual(['device', 'device']);
    expect(w2.body.tokens_by_source.device).toBeGreaterThanOrEqual(512);
    expect(w2.body.cached_tokens).toBe(w2.body.tokens_by_source.device);

    // Bob sends R; then Alice sends the same R: her keys are salted apart from his.
    await complete(KEYS.bob, R);
    await settle();
    const isolated = await complete(KEYS.alice, R);
    const plain = await why(KEYS.alice, isolated);
    expect(chunk(plain.body, 0)).toMatchObject({ source: 'computed', reason: 'never_stored' });
    expect(JSON.stringify(plain.body)).not.toMatch(/tenant_isolated|another tenant/);
    const asAdmin = await why(KEYS.alice, isolated, KEYS.admin);
    expect(chunk(asAdmin.body, 0)).toMatchObject({ source: 'computed', reason: 'tenant_isolated' });
    expect(chunk(asAdmin.body, 1)).toMatchObject({ reason: 'tenant_isolated' });

    // P was pushed out of the 40-block cache by R (twice over): its next request says so, and when.
    await settle();
    const again = await complete(KEYS.alice, P);
    const w3 = await why(KEYS.alice, again);
    const evicted = chunk(w3.body, 0);
    expect(evicted).toMatchObject({ source: 'computed', reason: 'evicted', tier: 'device' });
    expect(evicted.policy).toMatch(/LRU/);
    expect(Date.parse(evicted.at)).toBeGreaterThan(Date.now() - 60_000);

    // Bob cannot read Alice's request; a bad id (any shape) is a 400; an unknown one a 404.
    expect((await why(KEYS.bob, hit)).status).toBe(404);
    expect((await why(KEYS.alice, 'not a/valid id')).status).toBe(400);
    expect((await why(KEYS.alice, 'chatcmpl-%20bad')).status).toBe(400);
    expect((await why(KEYS.alice, 'chatcmpl-00000000-0000-0000-0000-000000000000')).status).toBe(404);
  });
});
