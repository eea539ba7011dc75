// DroidSpeak's offline profile and its held-out test on the reference engine, shared by the
// engine-level benchmark (bench/droidspeak.bench.mjs): profile the whole pattern grid on one
// dataset, choose the cheapest plan within the quality floor, then measure on a disjoint
// dataset the chosen plan, the best profiled plan per number of recomputed layers (the
// speed/quality curve), full reuse and full prefill. Base KV and E caches sit in host memory.
import { PairEvaluator } from '@mnemo/engine';
import { choosePlan, paretoFrontier, patternGrid, patternKey, QUALITY_METRICS, reusesNothing } from '@mnemo/kv-core';
import { median, round } from '@mnemo/testkit';
import { curvePatterns } from './droidspeak.pairs.mjs';

const GREEDY = { temperature: 0, topP: 1, seed: 0 };
let seq = 0;

/**
 * Profiles the grid on `set` ({prompts, continuations?}); returns every measure, the top-1
 * frontier and the chosen plan (null: none within the floor), and per quality metric (`top1`,
 * `task`) its frontier and chosen plan under `byMetric`.
 */
export async function profilePair(engine, base, derived, set, { maxLoss, continuation = 16 }) {
  const t0 = performance.now();
  const ev = new PairEvaluator(engine, base, derived, continuation);
  await ev.prepare(set.prompts, set.continuations);
  const measured = [];
  for (const p of patternGrid(ev.layers)) measured.push(await ev.evaluate(p));
  const positions = ev.scoredPositions;
  ev.close();
  const points = measured.map((m) => ({
    pattern: m.pattern,
    quality: m.top1Agreement,
    meanKl: m.meanKl,
    taskLoss: m.taskLoss,
    recomputedLayers: m.recomputedLayers,
    eCacheBytesPerToken: m.eCacheBytesPerToken,
    prefillMs: m.prefillMs,
  }));
  const byMetric = {};
  for (const metric of QUALITY_METRICS) {
    const frontier = paretoFrontier(points, metric);
    const choice = choosePlan(frontier, { maxQualityLoss: maxLoss, load: 0, qualityMetric: metric });
    // A chosen plan that recomputes every layer is a full prefill: no plan.
    byMetric[metric] = { frontier, chosen: choice && !reusesNothing(choice.point.pattern, ev.layers) ? choice.point.pattern : null };
  }
  const { frontier, chosen } = byMetric.top1;
  return { measured, frontier, chosen, byMetric, positions, seconds: (performance.now() - t0) / 1000 };
}

/** Quality of each pattern on the held-out `set`: {key → {loss (1 − top-1), kl, task (task loss), recomputed}} and the scored positions. */
export async function testPatterns(engine, base, derived, set, patterns, { continuation = 16 } = {}) {
  const ev = new PairEvaluator(engine, base, derived, continuation);
  await ev.prepare(set.prompts, set.continuations);
  const out = {};
  for (const p of patterns) {
    const key = patternKey(p);
    if (out[key]) continue;
    const m = await ev.evaluate(p);
    out[key] = { loss: round(1 - m.top1Agreement, 4), kl: round(m.meanKl, 5), task: round(m.taskLoss, 5), recomputed: m.recomputedLayers };
  }
  const positions = ev.scoredPositions;
  ev.close();
  return { quality: out, positions };
}

/** Base KV per layer and E cache per layer of one prompt, from a full prefill of the base. */
async function baseCaches(engine, base, tokens) {
  const L = engine.modelConfig(base).layers;
  const id = `ds-base-${seq++}`;
  engine.openSequence(id, base, GREEDY);
  try {
    const [r] = await engine.step([{ seqId: id, tokens, logits: 'none' }], { captureLayers: [...Array(L).keys()] });
    const kv = Array.from({ length: L }, (_, l) =>
      engine.exportKv(id, { layerStart: l, layerEnd: l + 1, tokenStart: 0, tokenEnd: tokens.length }),
    );
    return { kv, e: r.eCache };
  } finally {
    engine.release(id);
  }
}

/**
 * Median prefill ms of the derived model's own full prefill and of each pattern's partial
 * prefill over the base's caches in host memory, interleaved per round so load hits all alike;
 * the first round warms up and is not counted.
 */
export async function inMemoryLatency(engine, base, derived, prompts, patterns, reps) {
  const L = engine.modelConfig(derived).layers;
  const runs = patterns.filter((p) => !reusesNothing(p, L));
  const ms = { full: [], ...Object.fromEntries(runs.map((p) => [patternKey(p), []])) };
  for (const tokens of prompts) {
    const c = await baseCaches(engine, base, tokens);
    for (let r = 0; r <= reps; r++) {
      const a = `ds-full-${seq++}`;
      engine.openSequence(a, derived, GREEDY);
      let t0 = performance.now();
      await engine.step([{ seqId: a, tokens }]);
      if (r > 0) ms.full.push(performance.now() - t0);
      engine.release(a);
      for (const pattern of runs) {
        const b = `ds-plan-${seq++}`;
        t0 = performance.now();
        await engine.partialPrefill(derived, GREEDY, { seqId: b, tokens, pattern, fetchKv: (l) => c.kv[l], fetchE: (l) => c.e.get(l) });
        if (r > 0) ms[patternKey(pattern)].push(performance.now() - t0);
        engine.release(b);
      }
    }
  }
  const fullMs = median(ms.full);
  const speedup = (p) => (reusesNothing(p, L) ? 1 : round(fullMs / median(ms[patternKey(p)]), 2));
  const planMs = (p) => (reusesNothing(p, L) ? round(fullMs, 2) : round(median(ms[patternKey(p)]), 2));
  return { fullMs: round(fullMs, 2), speedup, planMs };
}

/** The curve: per number of recomputed layers, the profile's best pattern with its profile and test loss and its speedup. */
export function curveRows(profile, test, latency, layers) {
  const byKey = new Map(profile.measured.map((m) => [patternKey(m.pattern), m]));
  return curvePatterns(profile.measured, layers).map(({ recomputed, pattern, key }) => ({
    recomputed_layers: recomputed,
    pattern: key,
    profile_loss: round(1 - byKey.get(key).top1Agreement, 4),
    profile_task_loss: round(byKey.get(key).taskLoss, 5),
    test_loss: test.quality[key].loss,
    test_task_loss: test.quality[key].task,
    test_kl: test.quality[key].kl,
    prefill_ms: latency?.planMs(pattern),
    speedup: latency?.speedup(pattern),
  }));
}

/** Of the curve's plans, the fastest whose held-out loss is within `maxLoss` (a full prefill, 1×, when none is). */
export function bestWithin(curve, maxLoss) {
  const ok = curve.filter((c) => c.test_loss <= maxLoss + 1e-9);
  return ok.reduce(
    (a, b) => (b.speedup > a.speedup ? b : a),
    ok.at(-1) ?? { pattern: 'full prefill', speedup: 1, test_loss: 0, test_kl: 0 },
  );
}

/** Each model's KV of `tokens`, per layer. */
export async function kvOf(engine, model, tokens) {
  const L = engine.modelConfig(model).layers;
  const id = `kv-${seq++}`;
  engine.openSequence(id, model, GREEDY);
  try {
    await engine.step([{ seqId: id, tokens, logits: 'none' }]);
    return Array.from({ length: L }, (_, l) =>
      engine.exportKv(id, { layerStart: l, layerEnd: l + 1, tokenStart: 0, tokenEnd: tokens.length }),
    );
  } finally {
    engine.release(id);
  }
}

/** Why a layer's KV can or cannot be reused: ‖KV_derived − KV_base‖ / ‖KV_derived‖ per layer on the same tokens. */
export async function kvDrift(engine, base, derived, tokens) {
  const [b, d] = [await kvOf(engine, base, tokens), await kvOf(engine, derived, tokens)];
  return d.map((dl, l) => {
    let num = 0;
    let den = 0;
    for (let i = 0; i < dl.length; i++) {
      num += (dl[i] - b[l][i]) ** 2;
      den += dl[i] ** 2;
    }
    return round(Math.sqrt(num / den), 3);
  });
}
