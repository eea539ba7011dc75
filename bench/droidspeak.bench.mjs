// DroidSpeak cross-model KV reuse on the reference engine (CPU, exact fp32): for each
// (base, derived) pair, profile the pattern grid on a training set of prompts, pick the
// cheapest plan within 1% top-1 loss (kv-core choosePlan), then on held-out prompts compare
// its prefill latency and quality with the derived model's own full prefill (the baseline:
// same engine, same kernels, timed the same way, median of repeats) and with full reuse of
// the base's KV. The base's KV and E cache sit in host memory, as the KV store's host tier
// would hand them over: fetch cost here is a memcpy per layer, no network.
// Keys: prefill_speedup_at_1pct, quality_loss, found_critical_layers (primary pair), and the
// same per pair under `pairs`. Writes bench/results/droidspeak.{json,svg}.
// Run: npm run bench -- droidspeak [--quick]   (after npx tsc -b)
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findSyntheticModel, PairEvaluator, ReferenceEngine, resolveWeights, syntheticPrompts } from '@mnemo/engine';
import { choosePlan, paretoFrontier, patternGrid, patternKey } from '@mnemo/kv-core';
import { median, round } from './lib/figures.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const quick = process.argv.includes('--quick');
const GREEDY = { temperature: 0, topP: 1, seed: 0 };
const MAX_LOSS = 0.01;
const PROFILE = quick ? { prompts: 4, tokens: 32, continuation: 8 } : { prompts: 8, tokens: 64, continuation: 16 };
const TEST = quick ? { prompts: 4, tokens: 128, continuation: 8, reps: 2 } : { prompts: 8, tokens: 384, continuation: 16, reps: 5 };

/** Synthetic pairs whose perturbed layers are known, plus trained pairs from tools/train when present. */
function pairs() {
  const out = [];
  for (const derived of quick ? ['mnemo-small-ds24'] : ['mnemo-small-ds24', 'mnemo-medium-ds35']) {
    const d = findSyntheticModel(derived).derivedFrom;
    out.push({ base: d.base, derived, perturbed: [Math.min(...d.layers), Math.max(...d.layers) + 1], kind: 'synthetic' });
  }
  const trained = join(root, 'tools/train/models');
  if (!quick && existsSync(join(trained, 'fortune-base', 'config.json'))) {
    for (const dir of readdirSync(trained).filter((n) => n !== 'fortune-base' && existsSync(join(trained, n, 'config.json')))) {
      out.push({ base: join(trained, 'fortune-base'), derived: join(trained, dir), perturbed: null, kind: 'trained' });
    }
  }
  return out;
}

let seq = 0;

/** Base KV per layer and E cache per layer of one prompt, from a full prefill of the base. */
async function baseCaches(engine, base, tokens) {
  const L = engine.modelConfig(base).layers;
  const id = `base-${seq++}`;
  engine.openSequence(id, base, GREEDY);
  try {
    const [r] = await engine.step([{ seqId: id, tokens, logits: 'none' }], { captureLayers: [...Array(L).keys()] });
    const kv = Array.from({ length: L }, (_, l) => engine.exportKv(id, { layerStart: l, layerEnd: l + 1, tokenStart: 0, tokenEnd: tokens.length }));
    return { kv, e: r.eCache };
  } finally {
    engine.release(id);
  }
}

/** Median wall time of a full prefill and of a partial prefill under `pattern`, interleaved so load hits both alike. */
async function latency(engine, pair, pattern, prompts, reps) {
  const full = [];
  const plan = [];
  for (const tokens of prompts) {
    const c = await baseCaches(engine, pair.base, tokens);
    for (let r = 0; r < reps; r++) {
      const a = `full-${seq++}`;
      engine.openSequence(a, pair.derived, GREEDY);
      let t0 = performance.now();
      await engine.step([{ seqId: a, tokens }]);
      full.push(performance.now() - t0);
      engine.release(a);
      const b = `plan-${seq++}`;
      t0 = performance.now();
      await engine.partialPrefill(pair.derived, GREEDY, { seqId: b, tokens, pattern, fetchKv: (l) => c.kv[l], fetchE: (l) => c.e.get(l) });
      plan.push(performance.now() - t0);
      engine.release(b);
    }
  }
  return { fullMs: median(full), planMs: median(plan) };
}

async function runPair(pair) {
  const maxTokens = Math.max(PROFILE.tokens, TEST.tokens) + Math.max(PROFILE.continuation, TEST.continuation);
  const weights = [resolveWeights(pair.base), resolveWeights(pair.derived)];
  const engine = new ReferenceEngine((await import('@mnemo/native-cuda')).createKernelBackend('cpu'), weights, 4 * Math.ceil(maxTokens / 16) + 4);
  // Directory models are served under their directory name.
  const [baseId, derivedId] = weights.map((w) => w.config.id);
  const ids = { ...pair, base: baseId, derived: derivedId };
  try {
    const L = engine.modelConfig(derivedId).layers;
    // Offline: profile the grid on the training prompts.
    let t0 = performance.now();
    const profiler = new PairEvaluator(engine, baseId, derivedId, PROFILE.continuation);
    await profiler.prepare(syntheticPrompts(PROFILE.prompts, PROFILE.tokens, 11));
    const measured = [];
    for (const p of patternGrid(L)) measured.push(await profiler.evaluate(p));
    profiler.close();
    const profileSeconds = (performance.now() - t0) / 1000;
    const frontier = paretoFrontier(measured.map((m) => ({ pattern: m.pattern, quality: m.top1Agreement, meanKl: m.meanKl, recomputedLayers: m.recomputedLayers, eCacheBytesPerToken: m.eCacheBytesPerToken, prefillMs: m.prefillMs })));
    const chosen = choosePlan(frontier, { maxQualityLoss: MAX_LOSS, load: 0 }).point.pattern;

    // Online: held-out prompts, quality of the chosen plan, full prefill and full reuse.
    t0 = performance.now();
    const test = new PairEvaluator(engine, baseId, derivedId, TEST.continuation);
    await test.prepare(syntheticPrompts(TEST.prompts, TEST.tokens, 97));
    const q = {};
    for (const [name, p] of [['plan', chosen], ['full_prefill', { r1: 0, u1: 0, r2: L }], ['full_reuse', { r1: 0, u1: 0, r2: 0 }]]) q[name] = await test.evaluate(p);
    test.close();
    const testPrompts = syntheticPrompts(TEST.prompts, TEST.tokens, 97);
    const planLat = await latency(engine, ids, chosen, testPrompts, TEST.reps);
    const reuseLat = await latency(engine, ids, { r1: 0, u1: 0, r2: 0 }, testPrompts.slice(0, 2), TEST.reps);
    const evalSeconds = (performance.now() - t0) / 1000;
    const found = pair.perturbed ? chosen.u1 <= pair.perturbed[0] && chosen.r2 >= pair.perturbed[1] && (chosen.r1 === 0 || chosen.r1 >= pair.perturbed[1]) : null;
    return {
      base: baseId,
      derived: derivedId,
      kind: pair.kind,
      layers: L,
      perturbed_layers: pair.perturbed,
      chosen_pattern: chosen,
      recomputed_layers: q.plan.recomputedLayers,
      frontier: frontier.map((p) => ({ pattern: patternKey(p.pattern), quality: round(p.quality, 3), recomputed: p.recomputedLayers })),
      found_critical_layers: found,
      prefill_ms: { full_prefill: round(planLat.fullMs, 2), plan: round(planLat.planMs, 2), full_reuse: round(reuseLat.planMs, 2) },
      prefill_speedup_at_1pct: round(planLat.fullMs / planLat.planMs, 2),
      full_reuse_speedup: round(reuseLat.fullMs / reuseLat.planMs, 2),
      quality_loss: round(1 - q.plan.top1Agreement, 4),
      mean_kl: round(q.plan.meanKl, 5),
      full_reuse_quality_loss: round(1 - q.full_reuse.top1Agreement, 4),
      full_reuse_mean_kl: round(q.full_reuse.meanKl, 5),
      full_prefill_quality_loss: round(1 - q.full_prefill.top1Agreement, 4),
      e_cache_bytes_per_token: q.plan.eCacheBytesPerToken,
      profile: { ...PROFILE, patterns: measured.length, seconds: round(profileSeconds, 1) },
      test: { ...TEST, seconds: round(evalSeconds, 1) },
    };
  } finally {
    await engine.close();
  }
}

function svg(rows) {
  const W = 260;
  const H = 260;
  const parts = [];
  rows.forEach((r, i) => {
    const x0 = 20 + i * (W + 30);
    const bars = [
      ['full prefill', r.prefill_ms.full_prefill, 1 - r.full_prefill_quality_loss, '#888'],
      ['plan', r.prefill_ms.plan, 1 - r.quality_loss, '#2a7'],
      ['full reuse', r.prefill_ms.full_reuse, 1 - r.full_reuse_quality_loss, '#c33'],
    ];
    const max = Math.max(...bars.map((b) => b[1]));
    parts.push(`<text x="${x0}" y="20" font-size="12">${r.base} → ${r.derived}</text>`);
    parts.push(`<text x="${x0}" y="36" font-size="11">plan ${patternKey(r.chosen_pattern)}: ${r.prefill_speedup_at_1pct}× at ${(r.quality_loss * 100).toFixed(1)}% loss</text>`);
    bars.forEach(([name, ms, q, c], j) => {
      const h = (ms / max) * (H - 110);
      const x = x0 + j * 80;
      parts.push(`<rect x="${x}" y="${H - 40 - h}" width="60" height="${h}" fill="${c}"/>`);
      parts.push(`<text x="${x + 30}" y="${H - 44 - h}" font-size="10" text-anchor="middle">${ms} ms</text>`);
      parts.push(`<text x="${x + 30}" y="${H - 26}" font-size="10" text-anchor="middle">${name}</text>`);
      parts.push(`<text x="${x + 30}" y="${H - 12}" font-size="10" text-anchor="middle">top-1 ${(q * 100).toFixed(1)}%</text>`);
    });
  });
  const width = 40 + rows.length * (W + 30);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${H}" font-family="sans-serif">\n<rect width="100%" height="100%" fill="white"/>\n${parts.join('\n')}\n</svg>\n`;
}

const rows = [];
for (const pair of pairs()) {
  const r = await runPair(pair);
  rows.push(r);
  console.log(
    `${r.base} → ${r.derived}: plan ${patternKey(r.chosen_pattern)} (${r.recomputed_layers}/${r.layers} layers, perturbed ${JSON.stringify(r.perturbed_layers)}) ` +
      `prefill ${r.prefill_ms.plan} ms vs full ${r.prefill_ms.full_prefill} ms = ${r.prefill_speedup_at_1pct}×, loss ${(r.quality_loss * 100).toFixed(2)}% ` +
      `| full reuse ${r.full_reuse_speedup}× at ${(r.full_reuse_quality_loss * 100).toFixed(1)}% loss | found critical layers: ${r.found_critical_layers}`,
  );
}
// The primary figures come from the largest synthetic pair profiled (the most layers to skip).
const primary = rows.filter((r) => r.kind === 'synthetic').at(-1);
const result = {
  benchmark: 'droidspeak',
  quick,
  engine: 'reference (CPU backend, fp32)',
  max_quality_loss: MAX_LOSS,
  primary_pair: `${primary.base} → ${primary.derived}`,
  prefill_speedup_at_1pct: primary.prefill_speedup_at_1pct,
  quality_loss: primary.quality_loss,
  found_critical_layers: rows.filter((r) => r.found_critical_layers !== null).every((r) => r.found_critical_layers),
  target_speedup: 1.7,
  pairs: rows,
};
mkdirSync(join(root, 'bench/results'), { recursive: true });
writeFileSync(join(root, 'bench/results/droidspeak.json'), JSON.stringify(result, null, 2) + '\n');
writeFileSync(join(root, 'bench/results/droidspeak.svg'), svg(rows));
console.log(`prefill_speedup_at_1pct ${result.prefill_speedup_at_1pct}× (target ≥ 1.7×), quality_loss ${result.quality_loss}, found_critical_layers ${result.found_critical_layers}`);
console.log('wrote bench/results/droidspeak.json and droidspeak.svg');
