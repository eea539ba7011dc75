// DroidSpeak on the node: what a derived model's request costs when its prompt's prefix is
// prefilled over the base's KV the way the node does it (ReferenceEngine.prefill with a
// PrefillInput.crossModel plan, base KV per layer from host memory as the KV store's host tier
// hands it over, only whole 256-token chunks reused, the tail computed), side by side with the
// baseline, the derived model's own ordinary prefill of the same prompt (same engine, timed the
// same way, interleaved, median of repeats). Plans: the profiler's chosen plan per pair from
// bench/results/droidspeak.json, run as the node runs it when the base's E cache is kept (the base
// prefilled the prompt on this node: E from host memory), and as it runs without one — widened
// to (0, 0, r2). Quality: top-1 agreement with the derived model's own greedy continuation
// (PairEvaluator, held-out prompts).
// Keys: prefill_speedup_at_1pct, quality_loss (with the E cache, primary pair),
// prefill_speedup_without_e_cache, quality_loss_without_e_cache; per pair under `pairs`. Writes bench/results/droidspeak-node.{json,svg}.
// Run: npm run bench -- droidspeak-node [--quick]   (after npx tsc -b and npm run bench -- droidspeak)
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PairEvaluator, ReferenceEngine, syntheticPrompts } from '@mnemo/engine';
import { recomputedLayers, withoutTransition } from '@mnemo/kv-core';
import { loadProfiledPlans } from './lib/profiled-plans.mjs';
import { median, round } from './lib/figures.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const quick = process.argv.includes('--quick');
const GREEDY = { temperature: 0, topP: 1, seed: 0 };
const RUN = quick ? { prompts: 2, tokens: 300, continuation: 8, reps: 1 } : { prompts: 4, tokens: 576, continuation: 16, reps: 5 };
const CHUNK = 256;

const profiled = loadProfiledPlans(root);
let seq = 0;

/** The base's KV (per layer, positions [0, until)) and E caches of one prompt. */
async function baseCaches(engine, base, tokens, until) {
  const L = engine.modelConfig(base).layers;
  const id = `b${seq++}`;
  engine.openSequence(id, base, GREEDY);
  try {
    const [r] = await engine.step([{ seqId: id, tokens: tokens.slice(0, until), logits: 'none' }], { captureLayers: [...Array(L).keys()] });
    return { kv: Array.from({ length: L }, (_, l) => engine.exportKv(id, { layerStart: l, layerEnd: l + 1, tokenStart: 0, tokenEnd: until })), e: r.eCache };
  } finally {
    engine.release(id);
  }
}

/** One prefill of `tokens` for the derived model; with a plan, over the base's KV. Returns ms. */
async function prefillMs(engine, derived, tokens, plan) {
  const id = `d${seq++}`;
  const t0 = performance.now();
  const [out] = await engine.prefill([{ seqId: id, model: derived, tokens, sampling: GREEDY, ...(plan ? { crossModel: () => plan } : {}) }]);
  const ms = performance.now() - t0;
  engine.release(id);
  if (plan && !out.crossModel) throw new Error(`the engine declined the plan ${JSON.stringify(plan.pattern)}`);
  return ms;
}

async function runPair(p) {
  const prompts = syntheticPrompts(RUN.prompts, RUN.tokens, 131);
  const until = Math.min(Math.floor(RUN.tokens / CHUNK) * CHUNK, RUN.tokens - 1);
  const engine = await ReferenceEngine.create({ models: [p.base, p.derived], backend: 'cpu', kvBlocks: 4 * Math.ceil(RUN.tokens / 16) + 8 });
  try {
    const L = engine.modelConfig(p.derived).layers;
    const chosen = p.chosen_pattern;
    const node = withoutTransition(chosen, L);
    const caches = [];
    for (const t of prompts) caches.push(await baseCaches(engine, p.base, t, until));
    const plan = (i, pattern, withE) => ({
      baseModel: p.base,
      pattern,
      until,
      load: async (l) => caches[i].kv[l],
      ...(withE ? { loadE: async (l) => caches[i].e.get(l) } : {}),
    });
    const ms = { full_prefill: [], widened_no_e_cache: [], plan_with_e_cache: [] };
    for (let r = 0; r < RUN.reps + 1; r++) {
      for (let i = 0; i < prompts.length; i++) {
        // The first round warms the kernels up and is not counted.
        const full = await prefillMs(engine, p.derived, prompts[i]);
        const nodeMs = await prefillMs(engine, p.derived, prompts[i], plan(i, node, false));
        const eMs = await prefillMs(engine, p.derived, prompts[i], plan(i, chosen, true));
        if (r > 0) {
          ms.full_prefill.push(full);
          ms.widened_no_e_cache.push(nodeMs);
          ms.plan_with_e_cache.push(eMs);
        }
      }
    }
    const med = Object.fromEntries(Object.entries(ms).map(([k, v]) => [k, median(v)]));
    const evaluator = new PairEvaluator(engine, p.base, p.derived, RUN.continuation);
    await evaluator.prepare(syntheticPrompts(RUN.prompts, 128, 97));
    const qNode = await evaluator.evaluate(node);
    const qE = await evaluator.evaluate(chosen);
    evaluator.close();
    return {
      base: p.base,
      derived: p.derived,
      layers: L,
      profiled_pattern: chosen,
      widened_pattern: node,
      widened_recomputed_layers: recomputedLayers(node, L),
      prompt_tokens: RUN.tokens,
      reused_tokens: until,
      prefill_ms: Object.fromEntries(Object.entries(med).map(([k, v]) => [k, round(v, 2)])),
      prefill_speedup_at_1pct: round(med.full_prefill / med.plan_with_e_cache, 2),
      quality_loss: round(1 - qE.top1Agreement, 4),
      prefill_speedup_without_e_cache: round(med.full_prefill / med.widened_no_e_cache, 2),
      quality_loss_without_e_cache: round(1 - qNode.top1Agreement, 4),
    };
  } finally {
    await engine.close();
  }
}

function svg(rows) {
  const W = 560;
  const barH = 16;
  const groupH = 3 * barH + 30;
  const H = 40 + rows.length * groupH;
  const max = Math.max(...rows.flatMap((r) => Object.values(r.prefill_ms)));
  const colours = { full_prefill: '#888', widened_no_e_cache: '#2a7', plan_with_e_cache: '#27c' };
  const parts = [`<text x="10" y="20" font-size="13">Derived-model prefill on the node (ms, median) — grey: own prefill, blue: plan with E cache, green: widened (no E cache)</text>`];
  rows.forEach((r, g) => {
    const y0 = 40 + g * groupH;
    parts.push(`<text x="10" y="${y0 + 10}" font-size="12">${r.derived} (${r.reused_tokens}/${r.prompt_tokens} tokens reused)</text>`);
    Object.entries(r.prefill_ms).forEach(([k, v], i) => {
      const y = y0 + 16 + i * barH;
      const w = Math.max(1, (v / max) * (W - 200));
      parts.push(`<rect x="150" y="${y}" width="${w.toFixed(1)}" height="${barH - 3}" fill="${colours[k]}"/><text x="10" y="${y + 11}" font-size="11">${k}</text><text x="${(155 + w).toFixed(1)}" y="${y + 11}" font-size="11">${v}</text>`);
    });
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif">\n<rect width="100%" height="100%" fill="white"/>\n${parts.join('\n')}\n</svg>\n`;
}

const pairs = (quick ? profiled.pairs.slice(0, 1) : profiled.pairs).filter((p) => p.kind === 'synthetic');
const rows = [];
for (const p of pairs) {
  console.log(`${p.base} → ${p.derived}: profiled plan ${JSON.stringify(p.chosen_pattern)}`);
  const r = await runPair(p);
  console.log(
    `  own prefill ${r.prefill_ms.full_prefill} ms · with E cache ${r.prefill_ms.plan_with_e_cache} ms (${r.prefill_speedup_at_1pct}×, loss ${r.quality_loss}) · widened ${JSON.stringify(r.widened_pattern)} ${r.prefill_ms.widened_no_e_cache} ms (${r.prefill_speedup_without_e_cache}×, loss ${r.quality_loss_without_e_cache})`,
  );
  rows.push(r);
}
const primary = rows.at(-1);
const result = {
  benchmark: 'droidspeak-node',
  quick,
  engine: 'reference (CPU backend, fp32)',
  baseline: "the derived model's own ordinary prefill of the same prompt",
  primary_pair: `${primary.base} → ${primary.derived}`,
  prefill_speedup_at_1pct: primary.prefill_speedup_at_1pct,
  quality_loss: primary.quality_loss,
  prefill_speedup_without_e_cache: primary.prefill_speedup_without_e_cache,
  quality_loss_without_e_cache: primary.quality_loss_without_e_cache,
  pairs: rows,
};
writeFileSync(join(root, 'bench/results/droidspeak-node.json'), JSON.stringify(result, null, 2) + '\n');
writeFileSync(join(root, 'bench/results/droidspeak-node.svg'), svg(rows));
console.log('wrote bench/results/droidspeak-node.json and droidspeak-node.svg');
