import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { capacityPlan, planTable, PLAN_RUN, type PlanQuestion } from '@mnemo/twin';

// The plan is libs/twin's (experiments/plan, with its specs); here it runs as the command runs it: on the papers'
// sessions drawn by testkit's generator, the ports ./plan.mjs binds for each policy's thread.
const worker = { module: new URL('./plan.mjs', import.meta.url).href, fn: 'planOnePolicy' };
const ok = ['--users', '64', '--model', 'llama-3.1-8b', '--gpu', 'A100', '--slo-ttft-ms', '2000'];

describe('npm run twin -- plan: arguments', () => {
  it('exits with status 2 and the valid values before any run starts', () => {
    const r = spawnSync(process.execPath, [join(process.cwd(), 'scripts/twin.mjs'), 'plan', ...ok, '--gpu', 'TPU'], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('unknown gpu "TPU" (valid: A10, A100, H100)');
    const unpriced = spawnSync(process.execPath, [join(process.cwd(), 'scripts/twin.mjs'), 'plan', ...ok, '--gpu', 'h20'], {
      encoding: 'utf8',
    });
    expect(unpriced.status).toBe(2);
    expect(unpriced.stderr).toContain('gpu H20 has no price in plan.cost.ts (valid: A10, A100, H100)');
  });
});

describe('npm run twin -- plan: on the twin', () => {
  /** A plan small enough to run on the twin in seconds: two-instance cells, at most four instances, one tier size. */
  const TINY_PLAN_RUN = {
    ...PLAN_RUN,
    rampMs: 500,
    warmMs: 2000,
    untilMs: 5000,
    thinkCompression: 60,
    cellInstances: 2,
    minCellUsers: 4,
    usersPerInstanceStart: 3,
    maxInstances: 4,
    hostGbGrid: [256],
    ssdTbGrid: [4],
  };

  it('runs a tiny plan on the twin in seconds, the best point one that met', async () => {
    const o = { ...TINY_PLAN_RUN };
    const q: PlanQuestion = { users: 6, model: 'llama-3.1-8b', gpu: 'H100', sloTtftMs: 60_000, sloTpotMs: 1000, policies: ['symphony'] };
    const result = await capacityPlan(q, worker, { o, now: () => 0, workers: 1 });
    const p = result.plans.symphony!;
    // The floor it reports is a true lower bound: no run it made, cell or whole, went under it.
    const made = [...p.tried, ...((p.verification as { runs?: Array<{ ttft_p99_ms: number | null }> }).runs ?? [])];
    expect(typeof p.ttft_floor_ms).toBe('number');
    for (const r of made) if (r.ttft_p99_ms !== null) expect(r.ttft_p99_ms).toBeGreaterThanOrEqual(p.ttft_floor_ms!);
    expect(p.best).not.toBeNull();
    const run =
      p.verification?.runs?.find((t) => t.instances === p.best!.instances) ??
      p.tried.find((t) => t.ran && t.instances === p.best!.instances);
    expect(run).toMatchObject({ meets: true });
    expect(run!.requests).toBeGreaterThan(0);
    expect(planTable(result)).toMatch(/^policy +instances/);
    expect(result.search.twin_runs).toBe(p.tried.filter((t) => t.ran && !t.reused).length);
    expect(p.ttft_floor_ms).toBeGreaterThan(0);
  }, 60_000);

  it('declares a policy unable to meet an SLO only after running the whole cluster, never from the cells alone', async () => {
    const o = { ...TINY_PLAN_RUN };
    // 1 ms of P99 TTFT: no cell can meet it.
    const q: PlanQuestion = { users: 6, model: 'llama-3.1-8b', gpu: 'H100', sloTtftMs: 1, sloTpotMs: 1000, policies: ['symphony'] };
    const p = (await capacityPlan(q, worker, { o, now: () => 0, workers: 1 })).plans.symphony!;
    expect(p.slice_estimate).toBeNull();
    expect(p.best).toBeNull();
    const v = p.verification as { whole_cluster: boolean; runs: Array<{ instances: number; meets: boolean }> };
    expect(v.whole_cluster).toBe(true);
    expect(v.runs.length).toBeGreaterThan(0);
    expect(v.runs.every((r) => !r.meets)).toBe(true);
  }, 60_000);
});
