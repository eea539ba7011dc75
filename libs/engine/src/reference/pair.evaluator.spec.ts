import { choosePlan, paretoFrontier, patternGrid, type ProfiledPattern } from '@mnemo/kv-core';
import { cpuBackend } from '../../test/test-backend.js';
import { findSyntheticModel } from '../model/model.catalog.js';
import { syntheticWeightsFor } from '../weights/synthetic-weights.generator.js';
import { PairEvaluator, syntheticPrompts, type PatternMeasure } from './pair.evaluator.js';
import { ReferenceEngine } from './reference.engine.js';

const BASE = 'mnemo-small';
const DERIVED = 'mnemo-small-ds24';

function asProfiled(m: PatternMeasure): ProfiledPattern {
  return {
    pattern: m.pattern,
    quality: m.top1Agreement,
    meanKl: m.meanKl,
    recomputedLayers: m.recomputedLayers,
    eCacheBytesPerToken: m.eCacheBytesPerToken,
    prefillMs: m.prefillMs,
  };
}

describe(PairEvaluator.name, () => {
  let engine: ReferenceEngine;
  let sut: PairEvaluator;
  const [a, b] = (() => {
    const layers = findSyntheticModel(DERIVED)!.derivedFrom!.layers;
    return [Math.min(...layers), Math.max(...layers) + 1];
  })();

  beforeAll(async () => {
    engine = new ReferenceEngine(cpuBackend(), [syntheticWeightsFor(BASE), syntheticWeightsFor(DERIVED)], 64);
    sut = new PairEvaluator(engine, BASE, DERIVED, 16);
    await sut.prepare(syntheticPrompts(8, 40, 42));
    // Generous: generating two mnemo-small models takes tens of seconds under jest on a loaded machine.
  }, 300_000);
  afterAll(async () => {
    sut.close();
    await engine.close();
  });

  it('recomputing everything agrees exactly with the derived model (quality 1, KL 0, no E cache)', async () => {
    const m = await sut.evaluate({ r1: 0, u1: 0, r2: 6 });
    expect(m).toMatchObject({ top1Agreement: 1, meanKl: 0, recomputedLayers: 6, eCacheBytesPerToken: 0 });
    expect(m.prefillMs).toBeGreaterThan(0);
  });

  it('full reuse of the base KV clearly loses quality (the pair is perturbed enough to matter)', async () => {
    const m = await sut.evaluate({ r1: 0, u1: 0, r2: 0 });
    expect(m.top1Agreement).toBeLessThan(0.8);
    expect(m.meanKl).toBeGreaterThan(0.01);
    expect(m.recomputedLayers).toBe(0);
  });

  it('a transition layer costs one hidden state per token', async () => {
    const m = await sut.evaluate({ r1: 0, u1: a, r2: b });
    expect(m.eCacheBytesPerToken).toBe(engine.modelConfig(DERIVED).dModel * 4);
    expect(m.recomputedLayers).toBe(b - a);
  });

  it("over given text, scores every position against the derived model's own top-1 (recompute everything: exact)", async () => {
    const text = new PairEvaluator(engine, BASE, DERIVED);
    const prompts = syntheticPrompts(2, 40, 7);
    await text.prepare(prompts, syntheticPrompts(2, 12, 8));
    expect(text.scoredPositions).toBe(24);
    const full = await text.evaluate({ r1: 0, u1: 0, r2: 6 });
    expect(full).toMatchObject({ top1Agreement: 1, meanKl: 0, taskLoss: 0 });
    expect(full.meanNll).toBeGreaterThan(0);
    const reuse = await text.evaluate({ r1: 0, u1: 0, r2: 0 });
    expect(reuse.top1Agreement).toBeLessThan(1);
    expect(reuse.meanKl).toBeGreaterThan(0);
    // Task loss: the relative change of the given text's NLL from the derived model's own.
    expect(reuse.taskLoss).toBeCloseTo((reuse.meanNll - full.meanNll) / full.meanNll, 12);
    expect(reuse.taskLoss).not.toBe(0);
    await expect(text.prepare(prompts, [[1]])).rejects.toMatchObject({ code: 'invalid_request' });
    text.close();
  });

  it('refuses a pair of different shapes, and evaluating before prepare', async () => {
    const other = new ReferenceEngine(cpuBackend(), [syntheticWeightsFor('mnemo-tiny'), syntheticWeightsFor(BASE)], 8);
    expect(() => new PairEvaluator(other, 'mnemo-tiny', BASE)).toThrow(expect.objectContaining({ code: 'invalid_request' }));
    await expect(new PairEvaluator(engine, BASE, DERIVED).evaluate({ r1: 0, u1: 0, r2: 6 })).rejects.toMatchObject({ code: 'conflict' });
    await other.close();
  });

  it(
    `on a pair perturbing [${a}, ${b}), the best plan within 1% loss ` + `recomputes a contiguous range covering it and not much more`,
    async () => {
      const measures: PatternMeasure[] = [];
      for (const p of patternGrid(sut.layers)) measures.push(await sut.evaluate(p));
      const choice = choosePlan(paretoFrontier(measures.map(asProfiled)), { maxQualityLoss: 0.01, load: 0 });
      const { r1, u1, r2 } = choice!.point.pattern;
      // One contiguous recomputed range [u1, r2) (nothing recomputed below the reuse band) ...
      expect(r1).toBe(0);
      // ... that covers the perturbed layers ...
      expect(u1).toBeLessThanOrEqual(a);
      expect(r2).toBeGreaterThanOrEqual(b);
      // ... and adds at most one layer.
      expect(r2 - u1 - (b - a)).toBeLessThanOrEqual(1);
    },
    300_000,
  );
});
