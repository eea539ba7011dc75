import { DEFAULT_EFFICIENCY, GPUS, INFINIBAND, MODELS } from '../costs/hardware.tables.js';
import { rooflineCompute } from '../costs/roofline.compute.js';
import { eCacheBytesPerToken, mapPattern, planCost } from './reuse-plan.cost.js';

const model = MODELS['llama-3.1-8b'];
const compute = rooflineCompute(GPUS.A100, model);
const link = INFINIBAND.HDR;
const n = 10_000;
const q = 64;

describe(mapPattern.name, () => {
  it.each([
    ['recompute all', { r1: 0, u1: 0, r2: 8 }, { r1: 0, u1: 0, r2: 32 }],
    ['reuse all', { r1: 0, u1: 0, r2: 0 }, { r1: 0, u1: 0, r2: 0 }],
    ['one transition', { r1: 0, u1: 4, r2: 6 }, { r1: 0, u1: 16, r2: 24 }],
    ['all four ranges', { r1: 1, u1: 3, r2: 6 }, { r1: 4, u1: 12, r2: 24 }],
  ])('%s: 8 → 32 layers keeps the shape and the recomputed fraction', (_, p, want) => {
    expect(mapPattern(p, 8, 32)).toEqual(want);
  });

  it('rejects a pattern that is not one of the profiled model', () => {
    expect(() => mapPattern({ r1: 0, u1: 4, r2: 9 }, 8, 32)).toThrow();
  });
});

describe(planCost.name, () => {
  const full = planCost(compute, link, { r1: 0, u1: 0, r2: 32 }, n, q);
  const reuse = planCost(compute, link, { r1: 0, u1: 0, r2: 0 }, n, q);
  const quarter = planCost(compute, link, { r1: 0, u1: 16, r2: 24 }, n, q);

  it('prices a full prefill as the roofline prefill of the whole prompt, with nothing fetched', () => {
    const t = n + q;
    expect(full.computeMs).toBeCloseTo(compute.prefillMs(1, t, (t * (t + 1)) / 2), 6);
    expect(full.fetchBytes).toBe(0);
    expect(full.fetchMs).toBe(0);
  });

  it('fetches every layer of KV for full reuse and computes only the question', () => {
    expect(reuse.fetchBytes).toBe(n * 128 * 1024);
    expect(reuse.fetchMs).toBeCloseTo(32 * link.dispatchMs + reuse.fetchBytes / link.bytesPerMs, 6);
    expect(reuse.computeMs).toBeLessThan(full.computeMs / 50);
  });

  it('recomputes a quarter of the layers for about a quarter of the compute, and fetches the rest plus one E cache', () => {
    expect(quarter.recomputed).toBe(8);
    const share = (quarter.computeMs - DEFAULT_EFFICIENCY.stepMs) / (full.computeMs - DEFAULT_EFFICIENCY.stepMs);
    expect(share).toBeGreaterThan(0.25);
    expect(share).toBeLessThan(0.27);
    expect(quarter.fetchBytes).toBe(n * 24 * 4096 + n * eCacheBytesPerToken(model));
    expect(eCacheBytesPerToken(model)).toBe(2 * 4096);
  });
});
