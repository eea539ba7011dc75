import { decodeStepMs, prefillStepMs, type ForwardStep, type SimCostModel } from '@mnemo/engine';
import { fitEngineSteps } from './engine-steps.fit.js';

const TRUTH: SimCostModel = {
  prefillBaseMs: 1.5,
  prefillPerTokenMs: 0.08,
  prefillPerKContextMs: 0.01,
  decodeBaseMs: 3,
  decodePerSeqMs: 0.4,
  decodePerKContextMs: 0.02,
  restorePerChunkMs: 0,
};

/** Steps of varied shapes priced by a known cost model, each off by `noise` (alternating sign). */
function steps(noise = 0): ForwardStep[] {
  const out: ForwardStep[] = [];
  for (let i = 0; i < 40; i++) {
    const tokens = 50 + 97 * i;
    const attended = (tokens * (tokens - 1)) / 2 + 300 * tokens * (i % 3);
    const sign = i % 2 === 0 ? 1 : -1;
    out.push({
      kind: 'prefill',
      seqs: 1 + (i % 4),
      tokens,
      attendedTokens: attended,
      contextTokens: 0,
      ms: prefillStepMs(TRUTH, tokens, attended) * (1 + sign * noise),
    });
    const seqs = 1 + (i % 16);
    const context = seqs * (200 + 37 * i);
    out.push({
      kind: 'decode',
      seqs,
      tokens: seqs,
      attendedTokens: 0,
      contextTokens: context,
      ms: decodeStepMs(TRUTH, seqs, context) * (1 + sign * noise),
    });
  }
  return out;
}

const near = (a: number, b: number, rel: number) => expect(Math.abs(a - b)).toBeLessThanOrEqual(rel * Math.abs(b) + 1e-9);

describe(fitEngineSteps.name, () => {
  it('recovers the cost model that priced the steps', () => {
    const fit = fitEngineSteps(steps());
    for (const k of Object.keys(TRUTH) as Array<keyof SimCostModel>) near(fit.cost[k] ?? 0, TRUTH[k] ?? 0, 1e-6);
    expect(fit.prefill).toEqual({ steps: 40, median_abs_error: expect.any(Number), total_error: expect.any(Number) });
    expect(fit.prefill.median_abs_error!).toBeLessThan(1e-9);
    expect(Math.abs(fit.decode.total_error!)).toBeLessThan(1e-9);
  });

  it('with ±5 % noise, prices the run within a few percent in total', () => {
    const fit = fitEngineSteps(steps(0.05));
    expect(Math.abs(fit.prefill.total_error!)).toBeLessThan(0.02);
    expect(Math.abs(fit.decode.total_error!)).toBeLessThan(0.02);
    near(fit.cost.prefillPerTokenMs, TRUTH.prefillPerTokenMs, 0.1);
    near(fit.cost.decodePerSeqMs, TRUTH.decodePerSeqMs, 0.2);
  });

  it('never fits a negative term, and no prefix KV restore is priced by it', () => {
    // Decode steps that get faster with context (noise): that term is held at 0.
    const fast: ForwardStep[] = [1, 2, 3, 4].map((i) => ({
      kind: 'decode',
      seqs: 2,
      tokens: 2,
      attendedTokens: 0,
      contextTokens: 1000 * i,
      ms: 10 - i,
    }));
    const fit = fitEngineSteps(fast);
    expect(fit.cost.decodePerKContextMs).toBe(0);
    expect(Object.values(fit.cost).every((v) => v === undefined || v >= 0)).toBe(true);
    expect(fit.cost.restorePerChunkMs).toBe(0);
  });

  it('a kind with no steps keeps defaults and reports none', () => {
    const fit = fitEngineSteps(steps().filter((s) => s.kind === 'decode'));
    expect(fit.prefill).toEqual({ steps: 0, median_abs_error: null, total_error: null });
    expect(fit.decode.steps).toBe(40);
  });
});
