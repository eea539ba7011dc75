// DroidSpeak on the node's real path. For each trained pair (fortune-base → fortune-computers,
// → fortune-songs) the profiler-chosen plan (bench/results/droidspeak.json: profiled on the
// fine-tune's .profile.txt split) runs on prompts of held-out in-domain text (windows over the
// .test.txt split: 2,048 tokens — eight whole chunks — reused from the base, then 128 tokens the
// derived model computes itself) the way a node runs it: the base prefilled the prompt on this
// node, its KV written through to the KvStore's host and SSD pools and its E caches kept in the
// E-cache tier; the derived request's plan restores the base KV through the prompt store and the
// E cache through ECacheTier, inside the timed prefill (fetch counted). `peer`: a fresh node pulls
// both from that node over ChunkTransfer gRPC (loopback, same process, same two cores). Baseline:
// the derived model's own ordinary prefill of the same prompt, same engine, interleaved, median.
// The same is done for the profile's best plan per number of recomputed layers (the curve).
// Quality (top-1 disagreement with the derived model's own prediction, KL) is droidspeak.json's,
// measured by the same partial prefill (the node's crossModel prefill equals it: spec'd in
// cross-model.prefill.spec.ts) over the test split's windows, these prompts among them.
// kv_relative_drift_per_layer: how far each layer's KV of the fine-tune is from the base's on
// the same tokens — what decides whether a layer can be reused.
// `planted.*`: the constructed pairs, labelled, never the headline.
// Writes bench/results/droidspeak-node.json (figure: bench/figures/droidspeak-node.figure.mjs). Run: npm run bench -- droidspeak-node [--quick]
// (after npm run bench -- droidspeak).
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ReferenceEngine, syntheticPrompts } from '@mnemo/engine';
import { planReuse, withoutTransition } from '@mnemo/kv-core';
import { loadProfiledPlans } from './lib/profiled-plans.mjs';
import { arg, median, round } from '@mnemo/testkit';
import { slidingWindows, splitTokens } from './lib/droidspeak.pairs.mjs';
import { kvDrift } from './lib/droidspeak.profile.mjs';
import {
  basePrefill,
  CHUNK,
  derivedPrefillMs,
  ECacheTier,
  fallbacks,
  freshPeer,
  nodePlan,
  openNode,
  peerClient,
  peerSource,
  serveChunks,
} from './lib/droidspeak.node.mjs';
import { quick, root } from './lib/bench.args.mjs';

const RUN = quick ? { prompts: 1, reps: 1 } : { prompts: 2, reps: 3 };
const PLANTED = quick ? { prompts: 1, tokens: 300, reps: 1 } : { prompts: 2, tokens: 576, reps: 3 };

const profiled = loadProfiledPlans(root);
const parse = (key) => {
  const [r1, u1, r2] = key.split('-').map(Number);
  return { r1, u1, r2 };
};
const keyOf = (p) => `${p.r1}-${p.u1}-${p.r2}`;

/**
 * Median ms per variant over rounds × prompts: the derived model's own prefill, each pattern over
 * the node's own tiers, the chosen plan widened (no E cache) and the chosen plan from a peer.
 */
async function measure(engine, { base, derived, prompts, patterns, chosen, reps }) {
  const L = engine.modelConfig(derived).layers;
  const until = Math.min(Math.floor(prompts[0].length / CHUNK) * CHUNK, prompts[0].length - 1);
  const eLayer = (p) => planReuse(p, L).eLayer;
  const eLayers = [...new Set(patterns.map(eLayer).filter((l) => l !== null))];
  const dOf = (b) => (b === base ? engine.hiddenSize(base) : undefined);
  const { peers, logger } = peerClient();
  const y = await openNode(engine, base);
  const yTier = new ECacheTier(y.store, peers, dOf);
  const server = await serveChunks(y.store, logger);
  try {
    for (const t of prompts) await basePrefill(engine, base, yTier, t, eLayers);
    await y.store.settle();
    const ms = { full: [], widened: [], peer: [], ...Object.fromEntries(patterns.map((p) => [keyOf(p), []])) };
    const widened = chosen && withoutTransition(chosen, L);
    for (let r = 0; r <= reps; r++) {
      for (const t of prompts) {
        // Round 0 warms kernels, pools and connections up and is not counted.
        const keep = (k, v) => r > 0 && ms[k].push(v);
        keep('full', await derivedPrefillMs(engine, derived, t));
        for (const p of patterns)
          keep(
            keyOf(p),
            await derivedPrefillMs(
              engine,
              derived,
              t,
              nodePlan({ base, promptStore: y.store, tier: yTier, tokens: t, pattern: p, eLayer: eLayer(p), until }),
            ),
          );
        if (!chosen) continue;
        keep(
          'widened',
          await derivedPrefillMs(
            engine,
            derived,
            t,
            nodePlan({ base, promptStore: y.store, tier: yTier, tokens: t, pattern: widened, eLayer: null, until }),
          ),
        );
        // A fresh peer per prompt and round: what it pulled must not make the next pull local.
        const x = await freshPeer(engine, base, peers, dOf);
        try {
          const sources = peerSource(base, t, until, eLayer(chosen), server.address);
          keep(
            'peer',
            await derivedPrefillMs(
              engine,
              derived,
              t,
              nodePlan({ base, promptStore: x.prompts, tier: x.tier, tokens: t, pattern: chosen, eLayer: eLayer(chosen), until, sources }),
            ),
          );
        } finally {
          await x.close();
        }
      }
    }
    const med = Object.fromEntries(
      Object.entries(ms)
        .filter(([, v]) => v.length)
        .map(([k, v]) => [k, median(v)]),
    );
    return { med, until, widened, speedup: (k) => (med[k] ? round(med.full / med[k], 2) : 1) };
  } finally {
    await server.stop();
    peers.close();
    await y.store.close();
    rmSync(y.dir, { recursive: true, force: true });
  }
}

async function runTrained(p) {
  const dirs = { base: join(root, 'tools/train/models', p.base), derived: join(root, 'tools/train/models', p.derived) };
  const span = p.test.context + p.test.tail;
  // The test split's windows as droidspeak.json measured their quality; this run prefills `RUN.prompts` of them, evenly spaced.
  const all = slidingWindows(splitTokens(dirs.derived, join(root, p.test.split)), {
    count: p.test.windows,
    context: p.test.context,
    tail: p.test.tail,
  });
  const step = Math.max(1, Math.floor(p.test.windows / RUN.prompts));
  const prompts = Array.from({ length: RUN.prompts }, (_, i) => [...all.prompts[i * step], ...all.continuations[i * step]]);
  const engine = await ReferenceEngine.create({
    models: [dirs.base, dirs.derived],
    backend: 'cpu',
    kvBlocks: 4 * Math.ceil(span / 16) + 8,
  });
  try {
    const L = engine.modelConfig(p.derived).layers;
    const curve = p.curve.filter((c) => c.recomputed_layers < L);
    const patterns = curve.map((c) => parse(c.pattern));
    const m = await measure(engine, { base: p.base, derived: p.derived, prompts, patterns, chosen: p.chosen_pattern, reps: RUN.reps });
    const drift = await kvDrift(engine, p.base, p.derived, prompts[0].slice(0, m.until));
    const chosen = p.chosen_pattern && keyOf(p.chosen_pattern);
    const nodeCurve = p.curve.map((c) => ({
      recomputed_layers: c.recomputed_layers,
      pattern: c.pattern,
      test_loss: c.test_loss,
      test_kl: c.test_kl,
      prefill_ms: round(m.med[c.pattern] ?? m.med.full, 2),
      speedup: m.speedup(c.pattern),
    }));
    const ok = nodeCurve.filter((c) => c.test_loss <= 0.01 + 1e-9);
    const best = ok.reduce((a, b) => (b.speedup > a.speedup ? b : a));
    return {
      base: p.base,
      derived: p.derived,
      layers: L,
      profiled_pattern: p.chosen_pattern,
      prompt_tokens: span,
      reused_tokens: m.until,
      prompts: RUN.prompts,
      reps: RUN.reps,
      prefill_ms: {
        full_prefill: round(m.med.full, 2),
        plan_host_tier: round(chosen ? m.med[chosen] : m.med.full, 2),
        plan_from_peer: round(chosen ? m.med.peer : m.med.full, 2),
        widened_no_e_cache: round(chosen ? m.med.widened : m.med.full, 2),
      },
      prefill_speedup_at_1pct: chosen ? m.speedup(chosen) : 1,
      peer_prefill_speedup_at_1pct: chosen ? m.speedup('peer') : 1,
      prefill_speedup_without_e_cache: chosen ? m.speedup('widened') : 1,
      widened_pattern: m.widened,
      quality_loss: p.quality_loss,
      mean_kl: p.mean_kl,
      best_within_1pct_on_test: { pattern: best.pattern, speedup: best.speedup, loss: best.test_loss, kl: best.test_kl },
      kv_relative_drift_per_layer: drift,
      curve: nodeCurve,
    };
  } finally {
    await engine.close();
  }
}

async function runPlanted(p) {
  const prompts = syntheticPrompts(PLANTED.prompts, PLANTED.tokens, 131);
  const engine = await ReferenceEngine.create({
    models: [p.base, p.derived],
    backend: 'cpu',
    kvBlocks: 4 * Math.ceil(PLANTED.tokens / 16) + 8,
  });
  try {
    const m = await measure(engine, {
      base: p.base,
      derived: p.derived,
      prompts,
      patterns: [p.chosen_pattern],
      chosen: p.chosen_pattern,
      reps: PLANTED.reps,
    });
    return {
      base: p.base,
      derived: p.derived,
      profiled_pattern: p.chosen_pattern,
      prompt_tokens: PLANTED.tokens,
      reused_tokens: m.until,
      prefill_ms: {
        full_prefill: round(m.med.full, 2),
        plan_host_tier: round(m.med[keyOf(p.chosen_pattern)], 2),
        plan_from_peer: round(m.med.peer, 2),
        widened_no_e_cache: round(m.med.widened, 2),
      },
      prefill_speedup_at_1pct: m.speedup(keyOf(p.chosen_pattern)),
      peer_prefill_speedup_at_1pct: m.speedup('peer'),
      prefill_speedup_without_e_cache: m.speedup('widened'),
      quality_loss: p.quality_loss,
    };
  } finally {
    await engine.close();
  }
}

const only = arg('pairs', undefined)?.split(',');
const rows = [];
// `--pairs a,b`: only those of droidspeak.json's pairs (by name), where the machine has no time for all.
const chosen = profiled.pairs.filter((p) => !only || only.includes(p.name ?? p.derived));
for (const p of quick ? chosen.slice(0, 1) : chosen) {
  const r = { name: p.name ?? p.derived, kind: p.kind, ...(await runTrained(p)) };
  console.log(
    `${r.base} → ${r.derived}: plan ${r.profiled_pattern ? keyOf(r.profiled_pattern) : 'none (full prefill)'} own ${r.prefill_ms.full_prefill} ms · host tier ${r.prefill_ms.plan_host_tier} ms (${r.prefill_speedup_at_1pct}×) · ` +
      `peer ${r.prefill_ms.plan_from_peer} ms (${r.peer_prefill_speedup_at_1pct}×) · widened ${r.prefill_ms.widened_no_e_cache} ms · held-out loss ${r.quality_loss} KL ${r.mean_kl} · best within 1%: ${r.best_within_1pct_on_test.pattern} ${r.best_within_1pct_on_test.speedup}×`,
  );
  console.log(`   KV drift per layer (‖derived − base‖ / ‖derived‖): ${r.kv_relative_drift_per_layer.join(' ')}`);
  for (const c of r.curve) console.log(`   recompute ${c.recomputed_layers}: ${c.pattern} ${c.speedup}× loss ${c.test_loss}`);
  rows.push(r);
}
const planted = [];
for (const p of quick ? profiled.planted.pairs.slice(0, 1) : profiled.planted.pairs) {
  const r = await runPlanted(p);
  console.log(
    `[planted] ${r.base} → ${r.derived}: ${r.prefill_speedup_at_1pct}× host tier, ${r.peer_prefill_speedup_at_1pct}× peer, ${r.prefill_speedup_without_e_cache}× widened`,
  );
  planted.push(r);
}
const weakest = rows.reduce((a, b) => (b.prefill_speedup_at_1pct < a.prefill_speedup_at_1pct ? b : a));
const plantedPrimary = planted.at(-1);
const result = {
  benchmark: 'droidspeak-node',
  quick,
  engine: 'reference (CPU backend, fp32); KvStore host + SSD pools; ChunkTransfer gRPC on loopback',
  baseline: "the derived model's own ordinary prefill of the same prompt",
  headline_pairs: rows.map((r) => r.name),
  prefill_speedup_at_1pct: weakest.prefill_speedup_at_1pct,
  quality_loss: Math.max(...rows.map((r) => r.quality_loss)),
  mean_kl: Math.max(...rows.map((r) => r.mean_kl)),
  peer_prefill_speedup_at_1pct: Math.min(...rows.map((r) => r.peer_prefill_speedup_at_1pct)),
  prefill_speedup_without_e_cache: Math.min(...rows.map((r) => r.prefill_speedup_without_e_cache)),
  best_speedup_within_1pct_on_test: Math.min(...rows.map((r) => r.best_within_1pct_on_test.speedup)),
  peer_misses_recomputed: fallbacks.peer_misses,
  // The curve on the node path per pair, index = recomputed layers (0 = full reuse); the full prefill is 1× at no loss.
  curves: Object.fromEntries(
    rows.map((r) => [
      r.name,
      {
        test_loss: r.curve.filter((c) => c.recomputed_layers < r.layers).map((c) => c.test_loss),
        speedup: r.curve.filter((c) => c.recomputed_layers < r.layers).map((c) => c.speedup),
      },
    ]),
  ),
  kv_relative_drift_per_layer: Object.fromEntries(rows.map((r) => [r.name, r.kv_relative_drift_per_layer])),
  pairs: rows,
  planted: {
    note: 'constructed pairs (attention bases of two layers rotated, 1% noise), random-byte prompts: a test of the profiler and the plan path, not a finding',
    primary_pair: `${plantedPrimary.base} → ${plantedPrimary.derived}`,
    prefill_speedup_at_1pct: plantedPrimary.prefill_speedup_at_1pct,
    peer_prefill_speedup_at_1pct: plantedPrimary.peer_prefill_speedup_at_1pct,
    prefill_speedup_without_e_cache: plantedPrimary.prefill_speedup_without_e_cache,
    quality_loss: plantedPrimary.quality_loss,
    pairs: planted,
  },
};
writeFileSync(join(root, 'bench/results/droidspeak-node.json'), JSON.stringify(result, null, 2) + '\n');
console.log(
  `prefill_speedup_at_1pct ${result.prefill_speedup_at_1pct}× (host tier; peer ${result.peer_prefill_speedup_at_1pct}×) at held-out loss ${result.quality_loss}; best within 1% on test ${result.best_speedup_within_1pct_on_test}×`,
);
console.log('wrote bench/results/droidspeak-node.json (npm run bench renders its figure)');
