import { connect, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { choosePlan, patternGrid, patternKey, type ProfiledPattern } from '@mnemo/kv-core';
import { decodeMessage, FrontierUpdatedSchema, RegisterModelPairRequestSchema, RegisterModelRequestSchema, Subjects } from '@mnemo/proto';
import type { ProfilerHandle } from '../src/app.js';
import { bootProfiler, ProfilerTestClient } from './profiler-test.client.js';
import { parseSvg } from './svg.checker.js';

const BASE = 'mnemo-small';
const DERIVED = 'mnemo-small-ds24';
const PERTURBED: [number, number] = [2, 4];
const LAYERS = 6;

interface JobView {
  id: string;
  status: string;
  percent: number;
  etaSeconds: number | null;
  donePatterns: number;
  totalPatterns: number;
  runs: number;
  prompts: number;
  error: string | null;
}

describe('profiling jobs over REST', () => {
  let sut: ProfilerHandle;
  let client: ProfilerTestClient;
  let nc: NatsConnection;
  const url = (path: string) => `http://127.0.0.1:${sut.httpPort}${path}`;
  const post = (body: unknown) =>
    fetch(url('/v1/profiler/jobs'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const job = async (id: string): Promise<JobView> => {
    try {
      return (await (await fetch(url(`/v1/profiler/jobs/${id}`))).json()) as JobView;
    } catch {
      // A pooled keep-alive socket of the stopped profiler (a restarted one may get the same port): once more, fresh.
      return (await (await fetch(url(`/v1/profiler/jobs/${id}`))).json()) as JobView;
    }
  };

  /** Polls a job until `until` holds, keeping every view seen. */
  async function watch(id: string, until: (j: JobView) => boolean, timeoutMs = 150_000): Promise<JobView[]> {
    const seen: JobView[] = [];
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const j = await job(id);
      seen.push(j);
      if (j.status === 'failed') throw new Error(`job failed: ${j.error}`);
      if (until(j)) return seen;
      if (Date.now() > deadline) throw new Error(`job ${id} stuck at ${JSON.stringify(j)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  beforeAll(async () => {
    sut = await bootProfiler({ PROFILER_JOB_POLL_MS: '200', LOG_LEVEL: process.env.PROFILER_TEST_LOG ?? 'warn' });
    client = await ProfilerTestClient.connect();
    nc = await connect({ servers: process.env.NATS_URL! });
    // Catalog ids resolve to weights; registration is idempotent for an identical record.
    await client.request(Subjects.PROFILER_MODELS_REGISTER, RegisterModelRequestSchema, {
      id: BASE,
      architecture: 'mnemo-llama',
      numLayers: LAYERS,
    });
    await client.request(Subjects.PROFILER_MODELS_REGISTER, RegisterModelRequestSchema, {
      id: DERIVED,
      architecture: 'mnemo-llama',
      numLayers: LAYERS,
      baseModelId: BASE,
    });
    const r = await client.request(Subjects.PROFILER_PAIRS_REGISTER, RegisterModelPairRequestSchema, { base: BASE, derived: DERIVED });
    if (r.case !== 'pair' && !(r.case === 'error' && r.value.code === 'conflict')) throw new Error(`pair: ${JSON.stringify(r)}`);
  });
  afterAll(async () => {
    await nc?.drain();
    await client?.close();
    await sut?.stop();
  });

  it('refuses bad input with a 4xx and a code, and queues nothing', async () => {
    const bad = async (body: unknown, status: number, code: string) => {
      const res = await post(body);
      expect([res.status, ((await res.json()) as { error: { code: string } }).error.code]).toEqual([status, code]);
    };
    await bad({ base: BASE }, 400, 'invalid_request');
    await bad({ base: BASE, derived: BASE }, 400, 'invalid_request');
    await bad({ base: BASE, derived: DERIVED, dataset: { kind: 'synthetic', prompts: 0 } }, 400, 'invalid_request');
    await bad({ base: BASE, derived: DERIVED, dataset: { kind: 'jsonl', jsonl: 'not json' } }, 400, 'invalid_request');
    await bad({ base: BASE, derived: DERIVED, continuationTokens: 1e9 }, 400, 'invalid_request');
    await bad({ base: DERIVED, derived: BASE }, 404, 'not_found');
    const raw = await fetch(url('/v1/profiler/jobs'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"base":',
    });
    expect(raw.status).toBe(400);
    expect((await fetch(url('/v1/profiler/jobs/00000000-0000-4000-8000-000000000000'))).status).toBe(404);
    expect((await fetch(url('/v1/profiler/jobs/nope'))).status).toBe(404);
    expect((await fetch(url('/v1/profiler/pairs/nope/nada/frontier'))).status).toBe(404);
  });

  it('profiles a pair: progress while it runs, results and frontier in Postgres, heatmap with every pattern, a NATS notice', async () => {
    const updates: Subscription = nc.subscribe(Subjects.PROFILER_FRONTIER_UPDATED);
    const res = await post({
      base: BASE,
      derived: DERIVED,
      continuationTokens: 16,
      dataset: { kind: 'synthetic', prompts: 8, tokens: 40, seed: 42 },
    });
    expect(res.status).toBe(202);
    const started = (await res.json()) as JobView;
    expect(started).toMatchObject({ totalPatterns: patternGrid(LAYERS).length, prompts: 8 });

    const seen = await watch(started.id, (j) => j.status === 'done');
    const midway = seen.filter((j) => j.status === 'running' && j.percent > 0 && j.percent < 100);
    expect(midway.length).toBeGreaterThan(0);
    expect(midway.some((j) => typeof j.etaSeconds === 'number')).toBe(true);
    expect(seen.at(-1)).toMatchObject({ percent: 100, donePatterns: patternGrid(LAYERS).length, etaSeconds: 0 });

    const f = (await (await fetch(url(`/v1/profiler/pairs/${BASE}/${DERIVED}/frontier`))).json()) as {
      jobId: string;
      frontier: ProfiledPattern[];
      layers: number;
    };
    expect(f).toMatchObject({ jobId: started.id, layers: LAYERS });
    const plan = choosePlan(f.frontier, { maxQualityLoss: 0.01, load: 0 })!;
    const { r1, u1, r2 } = plan.point.pattern;
    expect([r1, u1 <= PERTURBED[0], r2 >= PERTURBED[1], r2 - u1 - (PERTURBED[1] - PERTURBED[0]) <= 1]).toEqual([0, true, true, true]);

    const svg = await fetch(url(`/v1/profiler/pairs/${BASE}/${DERIVED}/heatmap.svg`));
    expect(svg.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    const cells = parseSvg(await svg.text()).filter((e) => e.name === 'rect' && e.attrs['data-pattern']);
    expect(cells.map((c) => c.attrs['data-pattern']).sort()).toEqual(patternGrid(LAYERS).map(patternKey).sort());

    for await (const m of updates) {
      const u = decodeMessage(FrontierUpdatedSchema, m.data);
      if (u.jobId !== started.id) continue;
      expect(u).toMatchObject({ base: BASE, derived: DERIVED });
      expect(u.frontier.map((p) => patternKey(p.pattern!))).toEqual(f.frontier.map((p) => patternKey(p.pattern)));
      break;
    }
  }, 180_000);

  it('takes a JSONL dataset of prompts through the derived model tokenizer', async () => {
    const jsonl = ['{"prompt": "The quick brown fox"}', '', '{"prompt": "jumps over the lazy dog"}'].join('\n');
    const res = await post({ base: BASE, derived: DERIVED, continuationTokens: 2, dataset: { kind: 'jsonl', jsonl } });
    expect(res.status).toBe(202);
    const started = (await res.json()) as JobView;
    expect(started.prompts).toBe(2);
    await watch(started.id, (j) => j.status === 'done');
  }, 180_000);

  it('resumes a job after a profiler restart, without measuring a pattern twice', async () => {
    const res = await post({
      base: BASE,
      derived: DERIVED,
      continuationTokens: 16,
      dataset: { kind: 'synthetic', prompts: 8, tokens: 48, seed: 7 },
    });
    const started = (await res.json()) as JobView;
    await watch(started.id, (j) => j.donePatterns >= 3);
    await sut.stop();
    sut = await bootProfiler({ PROFILER_JOB_POLL_MS: '200' });
    const paused = await job(started.id);
    expect(paused.donePatterns).toBeGreaterThanOrEqual(3);
    expect(paused.donePatterns).toBeLessThan(paused.totalPatterns);

    const seen = await watch(started.id, (j) => j.status === 'done');
    expect(seen.at(-1)).toMatchObject({ runs: 2, donePatterns: patternGrid(LAYERS).length });
    // Progress never went backwards: the second run started from the stored patterns.
    const done = seen.map((j) => j.donePatterns);
    expect(done).toEqual([...done].sort((a, b) => a - b));
    expect(done[0]).toBeGreaterThanOrEqual(paused.donePatterns);
  }, 240_000);
});
