import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { MODELS } from '@mnemo/twin';
import { parsePlanArgs, PlanArgsError, PLAN_GPUS, PLAN_POLICIES } from './plan.args.mjs';
import { hourlyCost, PLAN_PRICES } from './plan.cost.mjs';
import { capacityPlan, defaultTpotSloMs, PLAN_RUN, planHardware, planTable } from './plan.mjs';
import { planPolicy, type Candidate, type Evaluation } from './plan.search.mjs';
import { ttftFloorMs, verifyWhole } from './plan.verify.mjs';

const ok = ['--users', '64', '--model', 'llama-3.1-8b', '--gpu', 'A100', '--slo-ttft-ms', '2000'];
const problemsOf = (argv: string[]): string[] => {
  try {
    parsePlanArgs(argv);
  } catch (e) {
    expect(e).toBeInstanceOf(PlanArgsError);
    expect((e as PlanArgsError).code).toBe(2);
    return (e as PlanArgsError).problems;
  }
  throw new Error('parsed');
};

describe('npm run twin -- plan: arguments', () => {
  it('parses a full command line, every policy by default', () => {
    expect(parsePlanArgs(ok)).toEqual({
      users: 64,
      model: 'llama-3.1-8b',
      gpu: 'A100',
      sloTtftMs: 2000,
      sloTpotMs: null,
      policies: PLAN_POLICIES,
      out: null,
    });
    expect(parsePlanArgs([...ok, '--policy', 'LLMD', '--slo-tpot-ms=25', '--out', 'x.json'])).toMatchObject({
      policies: ['llmd'],
      sloTpotMs: 25,
      out: 'x.json',
    });
    expect(parsePlanArgs([...ok.slice(0, 4), '--gpu', 'h100', ...ok.slice(6)]).gpu).toBe('H100');
  });

  it.each([
    ['an unknown model, listing the valid ones', ['--model', 'gpt-4'], `unknown model "gpt-4" (valid: ${Object.keys(MODELS).join(', ')})`],
    ['an unknown gpu, listing the priced ones', ['--gpu', 'V100'], 'unknown gpu "V100" (valid: A10, A100, H100)'],
    [
      'an unknown policy, listing the valid ones',
      ['--policy', 'sglang'],
      /unknown policy "sglang" \(valid: symphony, recompute, infercept, llmd\)/,
    ],
    ['users that are not a positive integer', ['--users', '2.5'], /--users must be a positive integer/],
    ['a non-numeric SLO', ['--slo-ttft-ms', 'fast'], /--slo-ttft-ms must be a positive number/],
    ['an unknown flag', ['--nodes', '4'], /unknown argument "--nodes"/],
    ['a flag without its value', ['--policy'], /--policy needs a value/],
    ['a model the GPU cannot hold a whole session of', ['--model', 'llama-2-13b', '--gpu', 'A10'], /leaves KV room for 0 tokens/],
  ])('rejects %s with exit code 2', (_, change, message) => {
    const argv = [...ok];
    for (let i = 0; i < change.length; i += 2) {
      const at = argv.indexOf(change[i]!);
      if (at >= 0) argv.splice(at, 2, ...change.slice(i, i + 2));
      else argv.push(...change.slice(i, i + 2));
    }
    expect(problemsOf(argv).join('\n')).toEqual(
      typeof message === 'string' ? expect.stringContaining(message) : expect.stringMatching(message),
    );
  });

  it('accepts only GPUs the cost model prices', () => {
    expect(Object.keys(PLAN_GPUS)).toEqual(['A10', 'A100', 'H100']);
  });

  it('lists every problem at once, the missing flags among them', () => {
    const problems = problemsOf(['--gpu', 'V100']);
    expect(problems).toEqual(expect.arrayContaining(['--users is required', '--model is required', '--slo-ttft-ms is required']));
    expect(problems.some((p) => p.startsWith('unknown gpu'))).toBe(true);
  });

  it('exits with status 2 and the valid values before any run starts', () => {
    const r = spawnSync(process.execPath, [join(process.cwd(), 'scripts/twin.mjs'), 'plan', ...ok, '--gpu', 'TPU'], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('unknown gpu "TPU" (valid: A10, A100, H100)');
    const unpriced = spawnSync(process.execPath, [join(process.cwd(), 'scripts/twin.mjs'), 'plan', ...ok, '--gpu', 'h20'], {
      encoding: 'utf8',
    });
    expect(unpriced.status).toBe(2);
    expect(unpriced.stderr).toContain('gpu H20 has no price in plan.cost.mjs (valid: A10, A100, H100)');
  });
});

describe('npm run twin -- plan: cost and search', () => {
  it('prices a configuration as GPUs plus per-node memory amortised over three years', () => {
    const perNode = (256 * PLAN_PRICES.dramUsdPerGb + 4 * PLAN_PRICES.ssdUsdPerTb) / (36 * 730);
    expect(hourlyCost({ gpu: 'A100', instances: 5, hostGb: 256, ssdTb: 4 })).toBeCloseTo(5 * 4.99 + 2 * perNode, 9);
    // One GPU more always costs more than the largest memory saving the grid offers on a node.
    expect(hourlyCost({ gpu: 'A10', instances: 1, hostGb: 0, ssdTb: 0 })).toBeGreaterThan(
      (1024 * PLAN_PRICES.dramUsdPerGb + 4 * PLAN_PRICES.ssdUsdPerTb) / (36 * 730),
    );
  });

  it("splits a node's memory over its GPUs as the symphony testbed does", () => {
    const hw = planHardware({ gpu: 'A100', model: 'llama-3.1-8b', instances: 4, hostGb: 256, ssdTb: 4 });
    expect(hw.hostPoolBytes).toBe(44 * 1024 ** 3);
    expect(hw.ssdPoolBytes).toBe(Math.floor(1e12 / 1024 ** 3) * 1024 ** 3);
    expect(defaultTpotSloMs({ gpu: 'A100', model: 'llama-3.1-8b' })).toBeGreaterThan(18);
    expect(defaultTpotSloMs({ gpu: 'A100', model: 'llama-3.1-8b' })).toBeLessThan(22);
  });

  // A model cluster: meets with at least `need` instances, fewer with more host memory; SSD does nothing.
  const synthetic = (need: (c: Candidate) => number) => {
    const calls: Candidate[] = [];
    const evaluate = (c: Candidate): Evaluation => {
      calls.push(c);
      const meets = c.instances >= need(c);
      return {
        meets,
        p99: meets ? 100 : 1000 / c.instances,
        tpotOk: true,
        summary: { ttft_p99_ms: meets ? 100 : 1000, tpot_mean_ms: 10, requests: 500 },
      };
    };
    return { evaluate, calls };
  };
  const grid = [64, 256, 1024].flatMap((hostGb) => [0, 4].map((ssdTb) => ({ hostGb, ssdTb })));
  const search = { gpu: 'A100', grid, base: { hostGb: 256, ssdTb: 4 }, start: 8, max: 256, floorGain: 0.1 };

  it('finds the fewest instances and the cheapest memory that meets, running each point at most once', () => {
    const { evaluate, calls } = synthetic((c) => (c.hostGb >= 1024 ? 9 : c.hostGb >= 256 ? 11 : 13));
    const plan = planPolicy({ ...search, evaluate });
    // 1024 GB saves 2 GPUs: cheaper than 256 GB's 11; SSD is cheaper left out when it changes nothing.
    expect(plan.best).toMatchObject({ instances: 9, host_gb: 1024, ssd_tb: 0 });
    const keys = calls.map((c) => `${c.instances}|${c.hostGb}|${c.ssdTb}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(calls.length).toBeLessThan(16);
    expect(plan.tried.filter((t) => t.ran)).toHaveLength(calls.length);
  });

  it('buys the least memory when memory changes nothing, settling points a run already decides without running them', () => {
    const { evaluate, calls } = synthetic(() => 11);
    const plan = planPolicy({ ...search, evaluate });
    expect(plan.best).toMatchObject({ instances: 11, host_gb: 64, ssd_tb: 0 });
    // 256 GB without SSD at 10 instances: the base point (more memory) already missed there.
    expect(plan.tried.find((t) => t.host_gb === 256 && t.ssd_tb === 0)).toMatchObject({
      instances: 10,
      ran: false,
      meets: false,
      settled_by: { instances: 10, host_gb: 256, ssd_tb: 4 },
    });
    expect(calls.some((c) => c.hostGb === 256 && c.ssdTb === 0)).toBe(false);
  });

  it('settles larger memory at the same size without a run when the run there never filled its pools', () => {
    const calls: Candidate[] = [];
    const evaluate = (c: Candidate): Evaluation => {
      calls.push(c);
      return { meets: c.instances >= 11, p99: 100, tpotOk: true, summary: { pool_evictions: c.hostGb >= 256 ? 0 : 5 } };
    };
    const plan = planPolicy({ ...search, evaluate });
    expect(plan.best).toMatchObject({ instances: 11 });
    // 1,024 GB at 10 instances: the base point's run there evicted nothing, so it would have run the same.
    expect(plan.tried.find((t) => t.host_gb === 1024 && t.ssd_tb === 4)).toMatchObject({
      instances: 10,
      ran: false,
      meets: false,
      settled_by: { host_gb: 256, ssd_tb: 4 },
    });
    expect(calls.some((c) => c.hostGb === 1024 && c.ssdTb === 4)).toBe(false);
  });

  it('reports no plan, with the reason, when doubling the instances stops helping', () => {
    const evaluate = (c: Candidate): Evaluation => ({
      meets: false,
      p99: c.instances < 16 ? 5000 / c.instances : 400,
      tpotOk: true,
      summary: {},
    });
    const plan = planPolicy({ ...search, evaluate });
    expect(plan.best).toBeNull();
    expect(plan.reason).toMatch(/floor/);
  });

  // A model whole cluster: P99 TTFT falls with instances towards `floor`; meets from `need` on.
  const wholeCluster = (need: number, p99At: (n: number) => number = (n) => 20_000 / n) => {
    const ran: number[] = [];
    const run = (n: number): Evaluation => {
      ran.push(n);
      const meets = n >= need;
      return { meets, p99: p99At(n), tpotOk: true, summary: { ttft_p99_ms: p99At(n), tpot_mean_ms: 19, requests: 300 } };
    };
    return { run, ran };
  };
  const verify = { max: 256, floorGain: 0.1, sloTtftMs: 2500 };

  it('keeps a cell answer the whole cluster meets, with its one run', () => {
    const { run, ran } = wholeCluster(7);
    expect(verifyWhole(run, { ...verify, start: 7 })).toMatchObject({ instances: 7, reason: null, runs: [{ instances: 7, meets: true }] });
    expect(ran).toEqual([7]);
  });

  it('steps a cell answer the whole cluster misses up by doubling, then bisects to the fewest that meet', () => {
    const { run, ran } = wholeCluster(11);
    const v = verifyWhole(run, { ...verify, start: 7 });
    expect(v.instances).toBe(11);
    // 7 misses, 14 meets, then 10 misses, 12 meets, 11 meets: every run reported, none twice.
    expect(ran).toEqual([7, 14, 10, 12, 11]);
    expect(v.runs.map((r) => [r.instances, r.meets])).toEqual([
      [7, false],
      [14, true],
      [10, false],
      [12, true],
      [11, true],
    ]);
  });

  it('reports the policy unable to meet the SLO only from whole-cluster runs: when doubling stops cutting P99 TTFT', () => {
    const flat = wholeCluster(1e9, (n) => 3000 + 1000 / n);
    const v = verifyWhole(flat.run, { ...verify, start: 7 });
    expect(v).toMatchObject({ instances: null, reason: expect.stringMatching(/floor at this load/) });
    expect(flat.ran).toEqual([7, 14]);
    const bound = wholeCluster(1e9);
    expect(verifyWhole(bound.run, { ...verify, start: 7, max: 20 }).reason).toMatch(/at 20 instances/);
    expect(bound.ran).toEqual([7, 14, 20]);
  });

  it("bounds P99 TTFT below by the P99 of each request's uncached prefill", () => {
    const hw = planHardware({ gpu: 'A100', model: 'llama-3.1-8b', instances: 1, hostGb: 0, ssdTb: 0 });
    const tokens = (n: number) => new Array<number>(n).fill(1);
    // 99 short sessions and one whose first turn pastes 40K tokens: the P99 of 100 requests is the 99th, a short one.
    const short = { system: tokens(300), doc: tokens(100), turns: [{ user: tokens(50), reply: 100 }] };
    const long = { ...short, doc: tokens(40_000) };
    const few = ttftFloorMs([...Array(99).fill(short), long], hw);
    const many = ttftFloorMs([...Array(98).fill(short), long, long], hw);
    expect(few).toBeLessThan(100);
    expect(many).toBeGreaterThan(2000);
    // A second turn on a cached history costs only its own tokens.
    const twoTurns = { ...long, turns: [...long.turns, { user: tokens(50), reply: 100 }] };
    expect(ttftFloorMs([twoTurns], hw, { p: 0.5 })).toBeLessThan(ttftFloorMs([long], hw) / 10);
  });

  it('tells in the table the verified answer beside the cell estimate, and why a policy cannot meet', () => {
    const best = {
      instances: 11,
      nodes: 3,
      host_gb: 256,
      ssd_tb: 4,
      cost_usd_per_hour: 55,
      ttft_p99_ms: 2100,
      tpot_mean_ms: 19,
      requests: 300,
    };
    const estimate = { ...best, instances: 7, ttft_p99_ms: 1300 };
    const runs = [
      { instances: 7, meets: false },
      { instances: 14, meets: true },
    ];
    const table = planTable({
      plans: {
        symphony: {
          best,
          slice_estimate: estimate,
          ttft_floor_ms: 1952,
          reason: null,
          tried: [],
          verification: { whole_cluster: true, meets: true, runs },
        },
        llmd: {
          best: null,
          slice_estimate: estimate,
          ttft_floor_ms: 1952,
          reason: 'whole cluster: P99 TTFT 9000 ms',
          tried: [],
          verification: { whole_cluster: true, meets: false, runs },
        },
      },
    } as never);
    expect(table).toMatch(/symphony +11 .* 7 \(1300 ms\) +1952 +0 \+ 2 whole/);
    expect(table).toMatch(/llmd +cannot meet/);
    expect(table).toMatch(/llmd: whole cluster: P99 TTFT 9000 ms/);
  });

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
    const q = { users: 6, model: 'llama-3.1-8b', gpu: 'H100', sloTtftMs: 60_000, sloTpotMs: 1000, policies: ['symphony'] };
    const result = await capacityPlan(q, { o, now: () => 0, workers: 1 });
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
    const q = { users: 6, model: 'llama-3.1-8b', gpu: 'H100', sloTtftMs: 1, sloTpotMs: 1000, policies: ['symphony'] };
    const p = (await capacityPlan(q, { o, now: () => 0, workers: 1 })).plans.symphony!;
    expect(p.slice_estimate).toBeNull();
    expect(p.best).toBeNull();
    const v = p.verification as { whole_cluster: boolean; runs: Array<{ instances: number; meets: boolean }> };
    expect(v.whole_cluster).toBe(true);
    expect(v.runs.length).toBeGreaterThan(0);
    expect(v.runs.every((r) => !r.meets)).toBe(true);
  }, 60_000);
});
