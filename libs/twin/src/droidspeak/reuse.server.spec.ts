import { recomputeAll, type ProfiledPattern } from '@mnemo/kv-core';
import { GPUS, INFINIBAND, MODELS } from '../costs/hardware.tables.js';
import { rooflineCompute } from '../costs/roofline.compute.js';
import { planCost } from './reuse-plan.cost.js';
import { serveReuse, type ReusePolicy, type ReuseServerConfig } from './reuse.server.js';

const compute = rooflineCompute(GPUS.A100, MODELS['llama-3.1-8b']);
const link = INFINIBAND.HDR;
const FULL = { kind: 'fixed', pattern: recomputeAll(32), qualityLoss: 0 } as const;
const cfg = (policy: ReusePolicy, o: Partial<ReuseServerConfig> = {}): ReuseServerConfig => ({
  compute,
  link,
  question: 64,
  outputTokens: 8,
  kvCapacityTokens: 1e9,
  policy,
  ...o,
});
const profiled = (r2: number, u1: number, quality: number): ProfiledPattern => {
  const pattern = { r1: 0, u1, r2 };
  return {
    pattern,
    quality,
    meanKl: 0,
    recomputedLayers: r2 - u1,
    eCacheBytesPerToken: u1 > 0 ? 8192 : 0,
    prefillMs: planCost(compute, link, pattern, 8000, 64).computeMs,
  };
};
const FRONTIER = [profiled(0, 0, 0.8), profiled(32, 24, 0.95), profiled(32, 0, 1)];

describe(serveReuse.name, () => {
  it('gives a lone request its unloaded prefill as TTFT, and decodes the rest of its tokens after it', () => {
    const run = serveReuse([{ arrivalMs: 0, context: 8000 }], cfg(FULL));
    const c = planCost(compute, link, recomputeAll(32), 8000, 64);
    expect(run.ttftMs[0]).toBeCloseTo(c.computeMs, 6);
    expect(run.e2eMs[0]).toBeGreaterThan(run.ttftMs[0]! + 7 * compute.decodeMs(1, 8064));
    expect(run.recomputed[0]).toBe(32);
  });

  it('queues prefills first come, first served: a burst waits one prefill per request ahead', () => {
    const burst = Array.from({ length: 4 }, () => ({ arrivalMs: 0, context: 8000 }));
    const run = serveReuse(burst, cfg(FULL));
    for (let i = 1; i < 4; i++) expect(run.ttftMs[i]! - run.ttftMs[i - 1]!).toBeCloseTo(run.ttftMs[0]!, 6);
  });

  it("holds a prefill back while the running sequences' KV would overflow the device", () => {
    const two = [
      { arrivalMs: 0, context: 8000 },
      { arrivalMs: 0, context: 8000 },
    ];
    const roomy = serveReuse(two, cfg(FULL));
    const tight = serveReuse(two, cfg(FULL, { kvCapacityTokens: 9000 }));
    expect(tight.ttftMs[1]).toBeGreaterThan(roomy.ttftMs[1]!);
    expect(tight.ttftMs[1]).toBeGreaterThanOrEqual(tight.e2eMs[0]!);
  });

  it.each([
    ['a floor only full prefill meets runs full prefills', 0.01, undefined, false, [32, 32, 32, 32]],
    ['no budget: the cheapest plan within the floor for everyone', 0.06, undefined, false, [8, 8, 8, 8]],
    ['a budget: the wait and the queue behind charged, all but the first take the cheaper plan', 0.06, 1500, false, [32, 8, 8, 8]],
    ['a budget, the wait ignored: one with nobody waiting behind recomputes everything though late', 0.06, 1500, true, [32, 8, 8, 32]],
    ['a loose floor and no budget: full reuse', 0.25, undefined, false, [0, 0, 0, 0]],
  ])('follows kv-core choosePlan: %s', (_, maxQualityLoss, latencyBudgetMs, ignoreWait, want) => {
    // One alone, three while it runs: the first two of those see the others waiting, the last none.
    const reqs = [0, 1, 1, 1].map((arrivalMs) => ({ arrivalMs, context: 8000 }));
    const run = serveReuse(
      reqs,
      cfg({ kind: 'chosen', frontier: FRONTIER, maxQualityLoss, ignoreWait, ...(latencyBudgetMs ? { latencyBudgetMs } : {}) }),
    );
    expect(Array.from(run.recomputed)).toEqual(want);
  });

  it('charges the time a request already waited against its budget, as the live node does', () => {
    // The second request waits a full prefill (~0.94 s) with nobody behind it: of a 1.5 s budget,
    // what the wait left does not fit another full prefill; the budget without the wait still does.
    const reqs = [0, 1].map((arrivalMs) => ({ arrivalMs, context: 8000 }));
    const policy = { kind: 'chosen', frontier: FRONTIER, maxQualityLoss: 0.06, latencyBudgetMs: 1500 } as const;
    expect(Array.from(serveReuse(reqs, cfg(policy)).recomputed)).toEqual([32, 8]);
    expect(Array.from(serveReuse(reqs, cfg({ ...policy, ignoreWait: true })).recomputed)).toEqual([32, 32]);
  });
});
