// DroidSpeak cross-model KV reuse on the reference engine (CPU, exact fp32), engine level.
// Pairs of the DroidSpeak paper's kinds (bench/lib/droidspeak.pairs.mjs PAIRS, tools/train: 8 layers,
// one BPE): base → full fine-tune, full fine-tune ↔ full fine-tune, base → LoRA, LoRA ↔ LoRA.
// Quality both ways: top-1 disagreement with the derived model's own prediction (the floor the
// plan service keeps by default) and task loss, the relative increase of the derived model's
// held-out loss on its own domain (the paper's kind of quality). The whole pattern grid is profiled on sliding
// windows over the fine-tune's `.profile.txt` split, the cheapest plan within 1% top-1 loss is
// chosen (kv-core choosePlan), and on windows over the disjoint `.test.txt` split of the same
// domain (contexts of 2,048 tokens reused from the base, then 128 tokens of the text that follows
// teacher-forced and scored against the derived model's own top-1, ≥ 2,000 positions) the chosen
// plan, the profile's best plan per number of recomputed layers (the curve), full reuse and full
// prefill are measured: top-1 disagreement and mean KL(derived ‖ plan). Prefill speedup is the
// derived model's own full prefill ÷ the plan's partial prefill, base KV and E cache in host
// memory, median of interleaved repeats (the node's path, with tiers and peers, is droidspeak-node).
// `planted.*`: the constructed pairs (mnemo-small-ds24, mnemo-medium-ds35: two layers' attention
// bases rotated) on random-byte prompts — a test of the profiler, never the headline.
// Writes bench/results/droidspeak.json (figure: bench/figures/droidspeak.figure.mjs). Run: npm run bench -- droidspeak [--quick]
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findSyntheticModel, ReferenceEngine, syntheticPrompts } from '@mnemo/engine';
import { patternKey } from '@mnemo/kv-core';
import { arg, round } from '@mnemo/testkit';
import { curvePatterns, PAIR_KINDS, PAIRS, pairPaths, slidingWindows, splitTokens } from './lib/droidspeak.pairs.mjs';
import { bestWithin, curveRows, inMemoryLatency, kvDrift, profilePair, testPatterns } from './lib/droidspeak.profile.mjs';
import { quick, root } from './lib/bench.args.mjs';

/** The value after `--name`, or undefined. */
const argOf = (flag) => arg(flag.slice(2), undefined);
// Pairs run in child processes, `--jobs` at a time (each engine computes on one core).
const JOBS = Number(argOf('--jobs') ?? 2);
const ONLY = argOf('--pairs')?.split(',');
const MAX_LOSS = 0.01;
const TRAINED = quick
  ? {
      pairs: ['base→computers', 'base→lora-computers'],
      context: 512,
      tail: 32,
      profileWindows: 2,
      testWindows: 4,
      latencyWindows: 1,
      reps: 1,
    }
  : {
      pairs: PAIRS.map((p) => p.name),
      // `--context N`: a shorter reused context where the machine has no time for 2,048 (the results record it).
      context: Number(argOf('--context') ?? 2048),
      tail: 128,
      profileWindows: 4,
      testWindows: 16,
      latencyWindows: 2,
      // `--reps N`: more interleaved latency rounds where load makes the median noisy (the results record it).
      reps: Number(argOf('--reps') ?? 3),
    };
const PLANTED = quick
  ? {
      derived: ['mnemo-small-ds24'],
      profile: { prompts: 4, tokens: 32, continuation: 8 },
      test: { prompts: 2, tokens: 128, continuation: 8, reps: 1 },
    }
  : {
      derived: ['mnemo-small-ds24', 'mnemo-medium-ds35'],
      profile: { prompts: 4, tokens: 64, continuation: 16 },
      test: { prompts: 4, tokens: 384, continuation: 16, reps: 3 },
    };

const FULL_REUSE = { r1: 0, u1: 0, r2: 0 };

async function runTrained(pair) {
  const span = TRAINED.context + TRAINED.tail;
  const engine = await ReferenceEngine.create({
    models: [pair.base, pair.derived],
    backend: 'cpu',
    kvBlocks: 4 * Math.ceil(span / 16) + 8,
  });
  try {
    const [base, derived] = [pair.base, pair.derived].map((d) => d.split('/').at(-1));
    const L = engine.modelConfig(derived).layers;
    const win = { count: 0, context: TRAINED.context, tail: TRAINED.tail };
    const profileSet = slidingWindows(splitTokens(pair.derived, pair.profileSplit), { ...win, count: TRAINED.profileWindows });
    const testSet = slidingWindows(splitTokens(pair.derived, pair.testSplit), { ...win, count: TRAINED.testWindows });
    const profile = await profilePair(engine, base, derived, profileSet, { maxLoss: MAX_LOSS });
    const t0 = performance.now();
    const curve = curvePatterns(profile.measured, L).map((c) => c.pattern);
    const taskPlan = profile.byMetric.task.chosen;
    const wanted = [...(profile.chosen ? [profile.chosen] : []), ...(taskPlan ? [taskPlan] : []), ...curve, FULL_REUSE];
    const test = await testPatterns(engine, base, derived, testSet, wanted);
    const latency = await inMemoryLatency(engine, base, derived, testSet.prompts.slice(0, TRAINED.latencyWindows), wanted, TRAINED.reps);
    const rows = curveRows(profile, test, latency, L);
    const chosenKey = profile.chosen && patternKey(profile.chosen);
    const best = bestWithin(rows, MAX_LOSS);
    const atPlan = (p) => (p ? test.quality[patternKey(p)] : { loss: 0, kl: 0, task: 0 });
    const drift = await kvDrift(engine, base, derived, testSet.prompts[0]);
    return {
      name: pair.name,
      measured_at: new Date().toISOString(),
      base,
      derived,
      kind: pair.kind,
      layers: L,
      speedup_at_1pct_top1: profile.chosen ? latency.speedup(profile.chosen) : 1,
      speedup_at_1pct_task: taskPlan ? latency.speedup(taskPlan) : 1,
      top1_at_plan: atPlan(profile.chosen).loss,
      task_loss_at_plan: atPlan(taskPlan).task,
      task_plan: {
        pattern: taskPlan,
        recomputed_layers: taskPlan ? test.quality[patternKey(taskPlan)].recomputed : L,
        top1_loss: atPlan(taskPlan).loss,
        task_loss: atPlan(taskPlan).task,
        profile_task_loss: taskPlan ? round(profile.measured.find((m) => patternKey(m.pattern) === patternKey(taskPlan)).taskLoss, 5) : 0,
      },
      top1_plan_task_loss: atPlan(profile.chosen).task,
      kv_relative_drift_per_layer: drift,
      chosen_pattern: profile.chosen,
      recomputed_layers: profile.chosen ? test.quality[chosenKey].recomputed : L,
      prefill_speedup_at_1pct: profile.chosen ? latency.speedup(profile.chosen) : 1,
      quality_loss: profile.chosen ? test.quality[chosenKey].loss : 0,
      mean_kl: profile.chosen ? test.quality[chosenKey].kl : 0,
      profile_quality_loss: profile.chosen
        ? round(1 - profile.measured.find((m) => patternKey(m.pattern) === chosenKey).top1Agreement, 4)
        : 0,
      best_within_1pct_on_test: { pattern: best.pattern, speedup: best.speedup, loss: best.test_loss, kl: best.test_kl },
      full_reuse_speedup: latency.speedup(FULL_REUSE),
      full_reuse_quality_loss: test.quality[patternKey(FULL_REUSE)].loss,
      full_reuse_mean_kl: test.quality[patternKey(FULL_REUSE)].kl,
      full_reuse_task_loss: test.quality[patternKey(FULL_REUSE)].task,
      best_within_1pct_task_on_test: bestWithinTask(rows),
      prefill_ms: {
        full_prefill: latency.fullMs,
        plan: profile.chosen ? latency.planMs(profile.chosen) : latency.fullMs,
        full_reuse: latency.planMs(FULL_REUSE),
      },
      curve: rows,
      frontier: profile.frontier.map((p) => ({
        pattern: patternKey(p.pattern),
        quality: round(p.quality, 4),
        task_loss: round(p.taskLoss, 5),
        recomputed: p.recomputedLayers,
      })),
      task_frontier: profile.byMetric.task.frontier.map((p) => ({
        pattern: patternKey(p.pattern),
        quality: round(p.quality, 4),
        task_loss: round(p.taskLoss, 5),
        recomputed: p.recomputedLayers,
      })),
      profile: {
        split: pair.profileSplit.slice(root.length + 1),
        windows: TRAINED.profileWindows,
        context: TRAINED.context,
        tail: TRAINED.tail,
        stride: profileSet.stride,
        scored_positions: profile.positions,
        patterns: profile.measured.length,
        seconds: round(profile.seconds, 1),
      },
      test: {
        split: pair.testSplit.slice(root.length + 1),
        windows: TRAINED.testWindows,
        context: TRAINED.context,
        tail: TRAINED.tail,
        stride: testSet.stride,
        scored_positions: test.positions,
        latency_windows: TRAINED.latencyWindows,
        reps: TRAINED.reps,
        seconds: round((performance.now() - t0) / 1000, 1),
      },
    };
  } finally {
    await engine.close();
  }
}

async function runPlanted(derived) {
  const d = findSyntheticModel(derived).derivedFrom;
  const perturbed = [Math.min(...d.layers), Math.max(...d.layers) + 1];
  const { profile: P, test: T } = PLANTED;
  const engine = await ReferenceEngine.create({
    models: [d.base, derived],
    backend: 'cpu',
    kvBlocks: 4 * Math.ceil((T.tokens + T.continuation) / 16) + 8,
  });
  try {
    const L = engine.modelConfig(derived).layers;
    const profile = await profilePair(
      engine,
      d.base,
      derived,
      { prompts: syntheticPrompts(P.prompts, P.tokens, 11) },
      { maxLoss: MAX_LOSS, continuation: P.continuation },
    );
    const chosen = profile.chosen ?? { r1: 0, u1: 0, r2: L };
    const testSet = { prompts: syntheticPrompts(T.prompts, T.tokens, 97) };
    const test = await testPatterns(engine, d.base, derived, testSet, [chosen, FULL_REUSE], { continuation: T.continuation });
    const latency = await inMemoryLatency(engine, d.base, derived, testSet.prompts.slice(0, 2), [chosen, FULL_REUSE], T.reps);
    const q = test.quality[patternKey(chosen)];
    return {
      base: d.base,
      derived,
      kind: 'planted',
      layers: L,
      perturbed_layers: perturbed,
      chosen_pattern: chosen,
      recomputed_layers: q.recomputed,
      found_critical_layers: chosen.u1 <= perturbed[0] && chosen.r2 >= perturbed[1] && (chosen.r1 === 0 || chosen.r1 >= perturbed[1]),
      prefill_ms: { full_prefill: latency.fullMs, plan: latency.planMs(chosen), full_reuse: latency.planMs(FULL_REUSE) },
      prefill_speedup_at_1pct: latency.speedup(chosen),
      quality_loss: q.loss,
      mean_kl: q.kl,
      full_reuse_speedup: latency.speedup(FULL_REUSE),
      full_reuse_quality_loss: test.quality[patternKey(FULL_REUSE)].loss,
      profile: { ...P, patterns: profile.measured.length, seconds: round(profile.seconds, 1) },
      test: { ...T, scored_positions: test.positions },
    };
  } finally {
    await engine.close();
  }
}

/** Of the curve's plans, the fastest whose held-out task loss is within 1%. */
function bestWithinTask(rows) {
  const ok = rows.filter((c) => c.test_task_loss <= MAX_LOSS + 1e-9);
  const best = ok.reduce(
    (a, b) => (b.speedup > a.speedup ? b : a),
    ok.at(-1) ?? { pattern: 'full prefill', speedup: 1, test_task_loss: 0 },
  );
  return { pattern: best.pattern, speedup: best.speedup, task_loss: best.test_task_loss, top1_loss: best.test_loss ?? 0 };
}

function previousPairs() {
  try {
    const prev = JSON.parse(readFileSync(join(root, 'bench/results/droidspeak.json'), 'utf8'));
    if (prev.quick || Array.isArray(prev.pairs)) return {};
    // Only pairs measured under this run's protocol (the same context length) are kept beside it.
    return Object.fromEntries(Object.entries(prev.pairs).filter(([, p]) => p.profile?.context === TRAINED.context));
  } catch {
    return {};
  }
}

/** Runs each pair in a child process (`--pair-worker NAME --out FILE`), `JOBS` at a time, in PAIRS order. */
async function runPairs(names) {
  const dir = mkdtempSync(join(tmpdir(), 'droidspeak-'));
  const out = new Array(names.length);
  let next = 0;
  const worker = async () => {
    while (next < names.length) {
      const i = next++;
      const file = join(dir, `${i}.json`);
      const pass = ['--context', '--reps'].flatMap((f) => (argOf(f) ? [f, argOf(f)] : []));
      const args = [fileURLToPath(import.meta.url), '--pair-worker', names[i], '--out', file, ...(quick ? ['--quick'] : []), ...pass];
      const code = await new Promise((res) => spawn(process.execPath, args, { stdio: 'inherit' }).on('exit', res));
      if (code !== 0) throw new Error(`pair ${names[i]}: worker exited with ${code}`);
      out[i] = JSON.parse(readFileSync(file, 'utf8'));
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(JOBS, names.length) }, worker));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

function curveSummary(curve, L) {
  const row = (k) => curve.find((c) => c.recomputed_layers === k);
  const ks = [...Array(L).keys()];
  return {
    test_loss: ks.map((k) => row(k)?.test_loss ?? null),
    test_kl: ks.map((k) => row(k)?.test_kl ?? null),
    test_task_loss: ks.map((k) => row(k)?.test_task_loss ?? null),
    speedup: ks.map((k) => row(k)?.speedup ?? null),
  };
}

const worker = argOf('--pair-worker');
if (worker) {
  const r = await runTrained(
    pairPaths(
      root,
      PAIRS.find((p) => p.name === worker),
    ),
  );
  writeFileSync(argOf('--out'), JSON.stringify(r));
  process.exit(0);
}
// `--pairs a,b` measures only those and keeps the other pairs as the last full-protocol run measured them (each pair has its date).
const fresh = await runPairs(TRAINED.pairs.filter((n) => !ONLY || ONLY.includes(n)));
// Read after the run, so two partial runs at once each keep what the other wrote when it finished first.
const kept = ONLY && !quick ? previousPairs() : {};
const trained = TRAINED.pairs.map((n) => fresh.find((r) => r.name === n) ?? kept[n]).filter(Boolean);
for (const r of trained) {
  console.log(
    `${r.name} [${r.kind}]: top-1 plan ${r.chosen_pattern ? patternKey(r.chosen_pattern) : 'none within 1% (full prefill)'} ` +
      `→ ${r.speedup_at_1pct_top1}× at held-out top-1 loss ${r.top1_at_plan} (task ${r.top1_plan_task_loss}); task plan ` +
      `${r.task_plan.pattern ? patternKey(r.task_plan.pattern) : 'none'} → ${r.speedup_at_1pct_task}× at task loss ${r.task_loss_at_plan} ` +
      `(top-1 ${r.task_plan.top1_loss}) over ${r.test.scored_positions} positions | full reuse ${r.full_reuse_speedup}× at ` +
      `${r.full_reuse_quality_loss} top-1, ${r.full_reuse_task_loss} task | KV drift ${r.kv_relative_drift_per_layer.join(' ')}`,
  );
  for (const c of r.curve)
    console.log(
      `   recompute ${c.recomputed_layers}: ${c.pattern} ${c.speedup}× top-1 loss ${c.test_loss} (profile ${c.profile_loss}) ` +
        `task ${c.test_task_loss} (profile ${c.profile_task_loss}) KL ${c.test_kl}`,
    );
}
const planted = [];
for (const derived of PLANTED.derived) {
  const r = await runPlanted(derived);
  planted.push(r);
  console.log(
    `[planted] ${r.base} → ${r.derived}: plan ${patternKey(r.chosen_pattern)} ${r.prefill_speedup_at_1pct}× at loss ${r.quality_loss}; perturbed ${JSON.stringify(r.perturbed_layers)} found: ${r.found_critical_layers}`,
  );
}
const plantedPrimary = planted.at(-1);
// The paper's Table 1 kinds; per kind, its best pair (the kind's headline is what one pair of it reaches).
const byKind = Object.fromEntries(
  PAIR_KINDS.filter((k) => trained.some((r) => r.kind === k)).map((k) => {
    const rs = trained.filter((r) => r.kind === k);
    const best = (key) => Math.max(...rs.map((r) => r[key]));
    return [
      k,
      {
        pairs: rs.map((r) => r.name),
        speedup_at_1pct_top1: best('speedup_at_1pct_top1'),
        speedup_at_1pct_task: best('speedup_at_1pct_task'),
      },
    ];
  }),
);
const bestKind = Object.entries(byKind).reduce((a, b) => (b[1].speedup_at_1pct_top1 > a[1].speedup_at_1pct_top1 ? b : a));
const fullFt = trained.filter((r) => r.kind === 'base_full_ft');
const weakest = (fullFt.length ? fullFt : trained).reduce((a, b) => (b.prefill_speedup_at_1pct < a.prefill_speedup_at_1pct ? b : a));
const result = {
  benchmark: 'droidspeak',
  quick,
  engine: 'reference (CPU backend, fp32)',
  max_quality_loss: MAX_LOSS,
  quality_metrics: {
    top1: "1 − top-1 agreement with the derived model's own prediction at every scored position (the default floor)",
    task: "relative increase of the derived model's held-out loss (NLL of the text that follows, i.e. bits per byte) on its own domain",
  },
  target_speedup: 1.7,
  best_kind_speedup_at_1pct_top1: bestKind[1].speedup_at_1pct_top1,
  best_kind_at_1pct_top1: bestKind[0],
  best_kind_speedup_at_1pct_task: Math.max(...Object.values(byKind).map((k) => k.speedup_at_1pct_task)),
  by_kind: byKind,
  // Today's headline keys, on the base → full fine-tune pairs (the weaker one).
  headline_pairs: fullFt.map((r) => r.name),
  prefill_speedup_at_1pct: weakest.prefill_speedup_at_1pct,
  quality_loss: Math.max(...fullFt.map((r) => r.quality_loss)),
  mean_kl: Math.max(...fullFt.map((r) => r.mean_kl)),
  best_speedup_within_1pct_on_test: Math.min(...fullFt.map((r) => r.best_within_1pct_on_test.speedup)),
  // The curve per pair, index = recomputed layers (0 = full reuse; the full prefill, L, is 1× at no loss).
  curves: Object.fromEntries(trained.map((r) => [r.name, curveSummary(r.curve, r.layers)])),
  kv_relative_drift_per_layer: Object.fromEntries(trained.map((r) => [r.name, r.kv_relative_drift_per_layer])),
  pairs: Object.fromEntries(trained.map((r) => [r.name, r])),
  planted: {
    note: 'constructed pairs (attention bases of two layers rotated, 1% noise), random-byte prompts: a test of the profiler, not a finding',
    primary_pair: `${plantedPrimary.base} → ${plantedPrimary.derived}`,
    prefill_speedup_at_1pct: plantedPrimary.prefill_speedup_at_1pct,
    quality_loss: plantedPrimary.quality_loss,
    found_critical_layers: planted.every((r) => r.found_critical_layers),
    pairs: planted,
  },
};
mkdirSync(join(root, 'bench/results'), { recursive: true });
writeFileSync(join(root, 'bench/results/droidspeak.json'), JSON.stringify(result, null, 2) + '\n');
console.log(
  `best kind at 1% top-1: ${result.best_kind_at_1pct_top1} ${result.best_kind_speedup_at_1pct_top1}× (target ≥ 1.7×); at 1% task loss ` +
    `${result.best_kind_speedup_at_1pct_task}×; by kind ${JSON.stringify(byKind)}`,
);
console.log(
  `prefill_speedup_at_1pct ${result.prefill_speedup_at_1pct}× (target ≥ 1.7×) at held-out loss ${result.quality_loss}; best within 1% on test ${result.best_speedup_within_1pct_on_test}×; planted: ${result.planted.prefill_speedup_at_1pct}× found ${result.planted.found_critical_layers}`,
);
console.log('wrote bench/results/droidspeak.json (npm run bench renders its figure)');
