import { connect, type NatsConnection } from '@nats-io/transport-node';
import { decodeMessage, encodeMessage, PlanReplySchema, PlanRequestSchema, Subjects } from '@mnemo/proto';
import { choosePlan } from '@mnemo/kv-core';
import { systemClock } from '@mnemo/service-kit';
import type { ProfilerHandle } from '../../apps/profiler/src/app.js';
import { ReusePlanCache } from '../../apps/node-manager/src/droidspeak/reuse-plan.cache.js';
import { registerPair, runProfilingJob, startJobProfiler } from './profiler-job.js';

const BASE = 'mnemo-tiny';
const DERIVED = 'mnemo-tiny-ft';

/** DroidSpeak plans end to end: a real profiler profiles a pair, a node's cache asks for and refreshes plans over NATS. */
describe('DroidSpeak plan service', () => {
  let profiler: ProfilerHandle;
  let nc: NatsConnection;
  let sut: ReusePlanCache;

  const runJob = async (seed: number): Promise<string> => {
    const dataset = { kind: 'synthetic', prompts: 3, tokens: 24, seed };
    const job = await runProfilingJob(`http://127.0.0.1:${profiler.httpPort}/v1/profiler`, {
      base: BASE,
      derived: DERIVED,
      continuationTokens: 4,
      dataset,
    });
    if (job.status === 'failed') throw new Error(job.error ?? 'job failed');
    return job.id;
  };
  const ask = async (init: Record<string, unknown>) =>
    decodeMessage(
      PlanReplySchema,
      (await nc.request(Subjects.PROFILER_PLAN, encodeMessage(PlanRequestSchema, init), { timeout: 10_000 })).data,
    );

  beforeAll(async () => {
    profiler = await startJobProfiler();
    nc = await connect({ servers: process.env.NATS_URL! });
    await registerPair(nc, BASE, DERIVED, 4);
    sut = new ReusePlanCache(nc, systemClock, { requestTimeoutMs: 10_000, missTtlMs: 60_000 });
    sut.start();
  });
  afterAll(async () => {
    sut?.stop();
    await nc?.drain();
    await profiler?.stop();
  });

  it('answers not_found before a profile exists, and the cache reads that as "full prefill"', async () => {
    expect((await ask({ base: 'nope', derived: 'nada' })).error).toMatchObject({ code: 'not_found' });
    expect(await sut.plan('nope', 'nada', { maxQualityLoss: 0.01, load: 0 })).toBeNull();
  });

  it('refuses bad requests with invalid_request', async () => {
    expect((await ask({ base: BASE, derived: DERIVED, maxQualityLoss: 2 })).error).toMatchObject({ code: 'invalid_request' });
    const raw = decodeMessage(
      PlanReplySchema,
      (await nc.request(Subjects.PROFILER_PLAN, new Uint8Array([0xff, 0xff, 0xff]), { timeout: 10_000 })).data,
    );
    expect(raw.error).toMatchObject({ code: 'invalid_request' });
  });

  it('serves the plan from a stored frontier, then chooses locally, and refreshes when a new frontier is stored', async () => {
    const first = await runJob(1);
    const reply = await ask({ base: BASE, derived: DERIVED, maxQualityLoss: 0.01 });
    expect(reply.frontierJobId).toBe(first);
    expect(reply.plan!.quality).toBeGreaterThanOrEqual(0.99);
    expect(reply.frontier.length).toBeGreaterThan(0);

    const plan = await sut.plan(BASE, DERIVED, { maxQualityLoss: 0.01, load: 0 });
    expect(plan!.point.pattern).toEqual({ r1: reply.plan!.pattern!.r1, u1: reply.plan!.pattern!.u1, r2: reply.plan!.pattern!.r2 });
    // A looser floor at high load picks a plan recomputing no more layers, from the cached frontier.
    const loose = await sut.plan(BASE, DERIVED, { maxQualityLoss: 0.5, latencyBudgetMs: 1, load: 10 });
    expect(loose!.point.recomputedLayers).toBeLessThanOrEqual(plan!.point.recomputedLayers);

    const second = await runJob(2);
    const deadline = Date.now() + 10_000;
    while (sut.peek(BASE, DERIVED)?.jobId !== second && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(sut.peek(BASE, DERIVED)?.jobId).toBe(second);
  }, 180_000);

  it("stores every pattern's task loss and answers under the metric the request names (top1 by default)", async () => {
    const reply = await ask({ base: BASE, derived: DERIVED, maxQualityLoss: 0.01 });
    // Every stored point carries a task loss; the frontier holds both metrics' frontiers.
    expect(reply.frontier.every((p) => typeof p.taskLoss === 'number')).toBe(true);
    const task = await ask({ base: BASE, derived: DERIVED, maxQualityLoss: 0.01, qualityMetric: 'task' });
    expect(task.error).toBeUndefined();
    expect(task.plan!.taskLoss!).toBeLessThanOrEqual(0.01 + 1e-9);
    const plain = (p: { r1: number; u1: number; r2: number }) => ({ r1: p.r1, u1: p.u1, r2: p.r2 });
    const frontier = reply.frontier.map((p) => ({ ...p, pattern: plain(p.pattern!), taskLoss: p.taskLoss! }));
    const want = choosePlan(frontier, { maxQualityLoss: 0.01, load: 0, qualityMetric: 'task' });
    expect(plain(task.plan!.pattern!)).toEqual(want!.point.pattern);
    const cached = await sut.plan(BASE, DERIVED, { maxQualityLoss: 0.01, load: 0, qualityMetric: 'task' });
    expect(cached!.point.pattern).toEqual(want!.point.pattern);
    const bad = await ask({ base: BASE, derived: DERIVED, qualityMetric: 'bleu' });
    expect(bad.error?.code).toBe('invalid_request');
  }, 60_000);

  it(
    'cachedPlan never waits on the profiler: undefined until the ' + 'frontier is here, then the plan; null for a pair with no profile',
    async () => {
      const fresh = new ReusePlanCache(nc, systemClock, { requestTimeoutMs: 10_000, missTtlMs: 60_000 });
      const req = { maxQualityLoss: 0.01, load: 0 };
      expect(fresh.cachedPlan(BASE, DERIVED, req)).toBeUndefined();
      expect(fresh.cachedPlan('nope', 'nada', req)).toBeUndefined();
      const deadline = Date.now() + 10_000;
      while ((!fresh.peek(BASE, DERIVED) || !fresh.peek('nope', 'nada')) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      expect(fresh.cachedPlan(BASE, DERIVED, req)!.point.pattern).toEqual((await sut.plan(BASE, DERIVED, req))!.point.pattern);
      expect(fresh.cachedPlan('nope', 'nada', req)).toBeNull();
    },
  );
});
