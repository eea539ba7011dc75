import { hourlyCost, PLAN_PRICES } from './plan.cost.js';
import { planPolicy, type Candidate, type Evaluation } from './plan.search.js';
import { defaultTpotSloMs, planHardware } from './plan.setup.js';

describe('plan cost and search', () => {
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
});
