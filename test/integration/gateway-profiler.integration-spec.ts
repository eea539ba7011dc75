import { connect, type NatsConnection } from '@nats-io/transport-node';
import { startGateway, type GatewayHandle } from '../../apps/gateway/src/app.js';
import type { ProfilerHandle } from '../../apps/profiler/src/app.js';
import { registerPair, runProfilingJob, startJobProfiler } from './profiler-job.js';

const BASE = 'mnemo-tiny';
const DERIVED = 'mnemo-tiny-ft';

/** The profiler's REST API through the gateway: proxied answers, the gateway's own 400s, 503 when the profiler is down. */
describe('gateway /v1/profiler', () => {
  let profiler: ProfilerHandle;
  let gateway: GatewayHandle;
  let nc: NatsConnection;
  const url = (path: string) => `http://127.0.0.1:${gateway.httpPort}/v1/profiler${path}`;
  const post = (body: unknown) =>
    fetch(url('/jobs'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  beforeAll(async () => {
    profiler = await startJobProfiler();
    gateway = await startGateway({
      NATS_URL: process.env.NATS_URL,
      GATEWAY_PORT: '0',
      GATEWAY_GRPC_PORT: '0',
      METRICS_PORT: '0',
      LOG_LEVEL: 'error',
      GATEWAY_PROFILER_URL: `http://127.0.0.1:${profiler.httpPort}`,
    });
    nc = await connect({ servers: process.env.NATS_URL! });
    await registerPair(nc, BASE, DERIVED, 4);
  });
  afterAll(async () => {
    await nc?.drain();
    await gateway?.stop();
    await profiler?.stop();
  });

  it('runs a job and serves its frontier and heatmap as the profiler does', async () => {
    const job = await runProfilingJob(url(''), {
      base: BASE,
      derived: DERIVED,
      continuationTokens: 4,
      dataset: { kind: 'synthetic', prompts: 2, tokens: 16, seed: 7 },
    });
    const id = job.id;
    expect(job).toMatchObject({ status: 'done', error: null });
    expect(job.donePatterns).toBe(job.totalPatterns);

    const viaGateway = await fetch(url(`/pairs/${BASE}/${DERIVED}/frontier`));
    const direct = await fetch(`http://127.0.0.1:${profiler.httpPort}/v1/profiler/pairs/${BASE}/${DERIVED}/frontier`);
    expect(viaGateway.status).toBe(200);
    const frontier = (await viaGateway.json()) as { jobId: string; frontier: unknown[] };
    expect(frontier).toEqual(await direct.json());
    expect(frontier.jobId).toBe(id);
    expect(frontier.frontier.length).toBeGreaterThan(0);

    const svg = await fetch(url(`/pairs/${BASE}/${DERIVED}/heatmap.svg`));
    expect(svg.status).toBe(200);
    expect(svg.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect(await svg.text()).toMatch(/<rect [^>]*data-pattern="\d+-\d+-\d+"/);
  }, 180_000);

  it('refuses bad input with 400 before asking the profiler', async () => {
    for (const body of [
      { base: BASE },
      { base: BASE, derived: DERIVED, continuationTokens: -1 },
      { base: BASE, derived: DERIVED, dataset: { kind: 'csv' } },
      [1],
    ]) {
      const res = await post(body);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('invalid_request');
    }
    const badId = await fetch(url('/jobs/not-a-uuid'));
    expect(badId.status).toBe(400);
    expect(((await badId.json()) as { error: { param: string } }).error.param).toBe('id');
  });

  it("passes the profiler's own refusals on: its 400 (limits) and 404 (unknown job or pair)", async () => {
    const tooMany = await post({ base: BASE, derived: DERIVED, dataset: { kind: 'synthetic', prompts: 100000 } });
    expect(tooMany.status).toBe(400);
    expect(((await tooMany.json()) as { error: { code: string } }).error.code).toBe('invalid_request');
    const job = await fetch(url('/jobs/0f8fad5b-d9cb-469f-a165-70867728950e'));
    expect(job.status).toBe(404);
    expect(((await job.json()) as { error: { code: string } }).error.code).toBe('not_found');
    const pair = await fetch(url(`/pairs/${encodeURIComponent('no/such')}/model/frontier`));
    expect(pair.status).toBe(404);
    expect(((await pair.json()) as { error: { message: string } }).error.message).toContain('no/such');
  });

  it('answers 503 once the profiler is down, and keeps serving', async () => {
    await profiler.stop();
    for (const res of [await fetch(url(`/pairs/${BASE}/${DERIVED}/frontier`)), await post({ base: BASE, derived: DERIVED })]) {
      expect(res.status).toBe(503);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('no_node_available');
    }
    expect((await fetch(`http://127.0.0.1:${gateway.metricsPort}/healthz`)).status).toBe(200);
  });
});
