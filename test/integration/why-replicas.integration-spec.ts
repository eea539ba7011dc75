// `why` with two scheduler replicas: requests routed by either replica are explained the same,
// whichever replica the queue group hands the lookup to (routing records are shared, newest
// attempt wins); an unknown id is a prompt 404, not a fan-out wait; lookups are rate-limited per
// tenant; every malformed id, whatever its shape, is the one documented 400.
import { gatewayCluster, scrape } from './cluster.js';

const KEYS = { alice: 'key-alice', mallory: 'key-mallory' };
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('why across scheduler replicas', () => {
  const gw = gatewayCluster({
    schedulers: 2,
    nodes: 1,
    gatewayEnv: { MNEMO_API_KEYS: `${KEYS.alice},${KEYS.mallory}`, GATEWAY_WHY_RATE: '1', GATEWAY_WHY_BURST: '60' },
  });

  const complete = async (i: number): Promise<string> => {
    const prompt = Array.from({ length: 300 }, (_, t) => 1 + ((i * 37 + t * 11) % 250));
    const r = await fetch(`${gw.base}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEYS.alice}` },
      body: JSON.stringify({ model: 'mnemo-tiny', prompt, max_tokens: 1, temperature: 0 }),
    });
    expect(r.status).toBe(200);
    return ((await r.json()) as Json).id as string;
  };
  const why = async (key: string, id: string) => {
    const r = await fetch(`${gw.base}/v1/requests/${id}/kv`, { headers: { authorization: `Bearer ${key}` } });
    return { status: r.status, body: (await r.json()) as Json };
  };
  const admitted = async (port: number) => (await scrape(port, 'mnemo_scheduler_dispatches_total{outcome="admitted"}')) ?? 0;

  it('gives one answer per id whichever replica routed it or answers', async () => {
    const ids: string[] = [];
    // The queue group spreads SCHEDULE over both replicas at random: go on until each has routed some (waiting on
    // the second alone, six requests that all went to it left the first with none, about one run in sixty).
    const routedByBoth = async () =>
      (await admitted(gw.cluster.schedulers[0]!.metricsPort)) > 0 && (await admitted(gw.cluster.schedulers[1]!.metricsPort)) > 0;
    for (let i = 0; i < 40 && (ids.length < 6 || !(await routedByBoth())); i++) ids.push(await complete(i));
    const [a, b] = [await admitted(gw.cluster.schedulers[0]!.metricsPort), await admitted(gw.cluster.schedulers[1]!.metricsPort)];
    expect(a).toBeGreaterThan(0);
    expect(b).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 300)); // records cross between replicas
    for (const id of ids) {
      const answers = [];
      for (let k = 0; k < 4; k++) answers.push(await why(KEYS.alice, id));
      expect(answers.map((x) => x.status)).toEqual([200, 200, 200, 200]);
      for (const x of answers.slice(1)) expect(x.body).toEqual(answers[0]!.body);
      expect(answers[0]!.body.node_id).toBe(gw.cluster.nodes[0]!.nodeId);
    }
    // Another tenant's id is the same 404 as an unknown one, from any replica.
    expect((await why(KEYS.mallory, ids[0]!)).status).toBe(404);
  });

  it('answers an unknown id at once, rate-limits lookups per tenant, and gives 400 to every malformed id', async () => {
    const t0 = Date.now();
    expect((await why(KEYS.alice, 'chatcmpl-00000000-0000-0000-0000-000000000000')).status).toBe(404);
    expect(Date.now() - t0).toBeLessThan(1000); // not the 3 s a fan-out waited
    for (const bad of ['not%20a/valid%20id', 'chatcmpl-%20bad', 'a/b/c', 'x'.repeat(200)]) {
      const r = await why(KEYS.alice, bad);
      expect([bad, r.status, r.body.error?.code]).toEqual([bad, 400, 'invalid_request']);
    }
    const statuses: number[] = [];
    for (let k = 0; k < 70; k++) statuses.push((await why(KEYS.mallory, `cmpl-guess-${k}`)).status);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    expect(statuses.filter((s) => s !== 404 && s !== 429)).toEqual([]);
    // Alice's bucket is her own.
    expect((await why(KEYS.alice, 'cmpl-another-unknown')).status).toBe(404);
  });
});
