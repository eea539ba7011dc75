// `npm run twin -- droidspeak`: DroidSpeak's serving experiment (§5.3 Fig. 15, §5.4 Fig. 16) on the
// twin: one modelled A100 serving the derived model of a pair, HotpotQA-like contexts whose base-
// model KV and E cache sit on another node behind InfiniBand, uniform arrivals at several rates.
// Full prefill, full reuse and the plans kv-core's choosePlan picks at the node's load and each
// request's wait from the profiles the reference engine measured on the trained pairs
// (tools/twin/droidspeak-profiles.mjs).
// Every cost comes from the hardware tables; nothing is fitted.
import { GPUS, INFINIBAND, MODELS, percentile, planCost, rooflineCompute, scaleGpu, SeededRng, serveReuse } from '@mnemo/twin';
import { profiledPairs, readProfiles, targetFrontier } from './droidspeak-profiles.mjs';

export const DROIDSPEAK_SETUP = {
  // §5.1: A100-80GB VMs (Azure ND96amsr_A100_v4) joined by InfiniBand (one 200 Gb/s HDR link per GPU).
  gpu: 'A100',
  link: 'HDR',
  // The paper's 8B-class pairs are Llama-3-8B and Mistral-7B fine-tunes; the tables hold Llama-3.1-8B (32 layers).
  model: 'llama-3.1-8b',
  // Table 2, HotpotQA (Fig. 15's dataset): median 10,933 tokens, P95 18,650 → a log-normal with that
  // median and σ = ln(18,650 / 10,933) / 1.645.
  contextMedian: 10_933,
  contextP95: 18_650,
  // Assumption: LongBench's HotpotQA template and question after the shared passages (tokens), new to both models.
  question: 64,
  // LongBench's generation cap for HotpotQA (dataset2maxlen: 32 tokens).
  outputTokens: 32,
  requests: 300,
  seed: 28,
  // §5.3: "request arrival times following uniform distribution under different incoming rates".
  rates: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1, 1.2, 1.5, 2, 2.5, 3, 4],
  // §5.3: "an SLO that avoids the effects of high queuing delays": P90 TTFT within this multiple of
  // full prefill's unloaded TTFT at the median context (a stated choice; `slo_sensitivity` varies it).
  sloOverUnloaded: 3,
  sloSensitivity: [2, 5],
  // §5.3: "the configuration within 1% accuracy drop"; the looser floors show what quality buys.
  headlineFloor: 0.01,
  floors: [0.01, 0.05, 0.1, 0.15],
  // The constructed pair shown beside the trained ones (bench droidspeak.json planted.primary_pair).
  constructed: 'mnemo-medium-ds35',
  // Fig. 16's x-axis: context lengths for the fetch share of prefill.
  contexts: [1024, 2048, 4096, 8192, 16_384, 32_768],
  // The robustness table's knobs.
  flopsScale: 1,
  memScale: 1,
  linkScale: 1,
};

/** DroidSpeak's published figures drawn over ours. */
export const DROIDSPEAK_PAPER = {
  throughput_vs_full_prefill: {
    value: [2, 3],
    where: '§5.3, Fig. 15: 2–3× higher throughput at the SLO, quality within 1% of full prefill',
  },
  fetch_share_of_prefill_max: {
    value: 0.11,
    where:
      '§5.4, Fig. 16: fetching KV and E cache over InfiniBand is at most 11% of the prefill delay (glue_sst2/conllpp, a plan that halves prefill)',
  },
  prefill_speedup: { value: [1.7, 2.6], where: '§5.2, Fig. 14: 1.7–2.6× lower prefill delay without compromising quality' },
};

export const round = (x, d = 4) => (x === null || x === undefined || !Number.isFinite(x) ? null : Math.round(x * 10 ** d) / 10 ** d);
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

export function hardware(s = DROIDSPEAK_SETUP) {
  const model = MODELS[s.model];
  const compute = rooflineCompute(scaleGpu(GPUS[s.gpu], { flops: s.flopsScale, mem: s.memScale }), model);
  const link = { ...INFINIBAND[s.link], bytesPerMs: INFINIBAND[s.link].bytesPerMs * s.linkScale };
  // vLLM's device KV: 90% of memory less weights and a 2 GiB activation reserve.
  const kvCapacityTokens = Math.floor(
    (GPUS[s.gpu].memBytes * 0.9 - model.params * model.dtypeBytes - 2 * 1024 ** 3) /
      (2 * model.layers * model.kvHeads * model.headDim * model.dtypeBytes),
  );
  return { compute, link, kvCapacityTokens };
}

/**
 * The workload's shape, drawn once so every rate and configuration sees the same requests: request
 * i arrives uniformly within the i-th interval of 1/rate (so a run offers exactly the rate), its
 * context log-normal. A rate only stretches time.
 */
export function workloadShape(s = DROIDSPEAK_SETUP) {
  const rng = new SeededRng(s.seed);
  const times = rng.fork(1);
  const lengths = rng.fork(2);
  const sigma = Math.log(s.contextP95 / s.contextMedian) / 1.645;
  const u = Array.from({ length: s.requests }, (_, i) => i + times.next());
  const contexts = Array.from({ length: s.requests }, () =>
    Math.max(256, Math.min(131_072 - s.question - s.outputTokens, Math.round(lengths.lognormal(s.contextMedian, sigma)))),
  );
  return { u, contexts };
}

const requestsAt = (shape, rate) => shape.u.map((x, i) => ({ arrivalMs: (x * 1000) / rate, context: shape.contexts[i] }));

/** One configuration at one rate: TTFT percentiles and what the plans cost in quality. */
function runAt(shape, hw, s, policy, rate, qualityOf) {
  const run = serveReuse(requestsAt(shape, rate), { ...hw, question: s.question, outputTokens: s.outputTokens, policy });
  const ttft = Array.from(run.ttftMs);
  const fetch = Array.from(run.fetchMs);
  const compute = Array.from(run.computeMs);
  const tested = run.patterns.map(qualityOf);
  return {
    rate,
    // Requests served per second of the run (first arrival to last token): the offered rate while the
    // GPU keeps up, the GPU's capacity when a finite run arrives faster than it can serve.
    achieved_rps: round(ttft.length / (run.endMs / 1000), 4),
    ttft_p50_s: round(percentile(ttft, 50) / 1000, 3),
    ttft_p90_s: round(percentile(ttft, 90) / 1000, 3),
    ttft_mean_s: round(mean(ttft) / 1000, 3),
    e2e_mean_s: round(mean(Array.from(run.e2eMs)) / 1000, 3),
    recomputed_layers_mean: round(mean(Array.from(run.recomputed)), 2),
    quality_loss_mean: round(mean(Array.from(run.qualityLoss)), 4),
    test_loss_mean: tested.every((t) => t !== null) ? round(mean(tested), 4) : null,
    fetch_share_of_prefill: round(mean(fetch) / mean(fetch.map((f, i) => f + compute[i])), 4),
  };
}

/**
 * The largest offered rate whose P90 TTFT meets the SLO: doubling to a failing rate, then
 * bisection to 1%. A finite run can meet it at any rate (the whole run in one burst within the
 * SLO): then the probe at the cap stands, and its achieved rate is the throughput.
 */
function rateAtSlo(probe, sloS, cap = 1000) {
  let lo = 0;
  let hi = 0.05;
  let atLo = null;
  for (let r = probe(hi); r.ttft_p90_s <= sloS; r = probe(hi)) {
    lo = hi;
    atLo = r;
    hi *= 2;
    if (hi > cap) return atLo;
  }
  while (hi - lo > 0.01 * hi) {
    const mid = (lo + hi) / 2;
    const r = probe(mid);
    if (r.ttft_p90_s <= sloS) [lo, atLo] = [mid, r];
    else hi = mid;
  }
  return atLo ?? { rate: 0, achieved_rps: 0 };
}

/** The configurations run for one pair: the baselines and kv-core's choice at each floor. */
export function configurations(pair, frontier, s, sloMs) {
  const L = MODELS[s.model].layers;
  const reuse = pair.points.find((p) => p.pattern.r2 === 0);
  const configs = {
    'full-prefill': { kind: 'fixed', pattern: { r1: 0, u1: 0, r2: L }, qualityLoss: 0 },
    'full-reuse': { kind: 'fixed', pattern: { r1: 0, u1: 0, r2: 0 }, qualityLoss: 1 - reuse.quality },
  };
  // The budget is the TTFT SLO, counted from arrival as the live node counts it: slack goes to
  // recomputation, load and the request's wait push towards reuse (§4.4; kv-core choosePlan).
  // `fixed-budget`: the estimate before the wait was charged (the whole SLO left to the prefill).
  // `cheapest`: the live node's default without a budget, the cheapest plan within the floor.
  for (const f of s.floors) {
    configs[`mnemo@${f * 100}%`] = { kind: 'chosen', frontier, maxQualityLoss: f, latencyBudgetMs: sloMs };
    configs[`mnemo-fixed-budget@${f * 100}%`] = { kind: 'chosen', frontier, maxQualityLoss: f, latencyBudgetMs: sloMs, ignoreWait: true };
    configs[`mnemo-cheapest@${f * 100}%`] = { kind: 'chosen', frontier, maxQualityLoss: f };
  }
  // The paper's kind of quality: the floor held on task loss (the profile's relative increase of the derived model's held-out loss).
  if (frontier.some((p) => p.taskLoss !== undefined))
    configs[`mnemo-task@${s.headlineFloor * 100}%`] = {
      kind: 'chosen',
      frontier,
      maxQualityLoss: s.headlineFloor,
      latencyBudgetMs: sloMs,
      qualityMetric: 'task',
    };
  return configs;
}

/** One pair: every configuration's curve and its throughput at the SLO. */
export function runPair(pair, s = DROIDSPEAK_SETUP, { shape = workloadShape(s), progress = () => {} } = {}) {
  const hw = hardware(s);
  const frontier = targetFrontier(pair, hw.compute, hw.link, s.contextMedian, s.question);
  const unloaded = frontier.find((p) => p.recomputedLayers === hw.compute.model.layers).prefillMs;
  const sloMs = s.sloOverUnloaded * unloaded;
  const key = (p) => `${p.r1}-${p.u1}-${p.r2}`;
  const testLoss = new Map(frontier.map((p) => [key(p.pattern), p.source.testLoss]));
  const configs = configurations(pair, frontier, s, sloMs);
  const out = {
    slo_p90_ttft_s: round(sloMs / 1000, 3),
    unloaded_full_prefill_s: round(unloaded / 1000, 3),
    frontier: frontier.map((p) => ({
      pattern: `${p.pattern.r1}-${p.pattern.u1}-${p.pattern.r2}`,
      profiled: p.source.key,
      recomputed: p.recomputedLayers,
      quality_loss: round(1 - p.quality, 4),
      test_loss: p.source.testLoss,
      prefill_s: round(p.prefillMs / 1000, 4),
    })),
    configs: {},
  };
  for (const [name, policy] of Object.entries(configs)) {
    progress(`${pair.name} ${name}`);
    // Each plan's held-out loss where the test measured that pattern (full prefill: 0).
    const qualityOf = (p) => testLoss.get(key(p)) ?? null;
    const probe = (rate) => runAt(shape, hw, s, policy, rate, qualityOf);
    const curve = s.rates.map(probe);
    const at = rateAtSlo(probe, sloMs / 1000);
    const sens = Object.fromEntries(s.sloSensitivity.map((k) => [k, rateAtSlo(probe, (k * unloaded) / 1000).achieved_rps]));
    out.configs[name] = { throughput_at_slo: at.achieved_rps, at_slo: at, throughput_at_slo_multiple: sens, curve };
  }
  return out;
}

/**
 * Fig. 16's breakdown on the target: for each plan of a pair's frontier that both fetches and
 * recomputes, the fetch's share of the unloaded prefill at each context length.
 */
export function fetchShares(pair, s = DROIDSPEAK_SETUP) {
  const hw = hardware(s);
  const L = hw.compute.model.layers;
  const plans = targetFrontier(pair, hw.compute, hw.link, s.contextMedian, s.question).filter(
    (p) => p.recomputedLayers > 0 && p.recomputedLayers < L,
  );
  return plans.map((p) => {
    const rows = s.contexts.map((n) => {
      const [c] = targetFrontier({ ...pair, points: [p.source] }, hw.compute, hw.link, n, s.question);
      const fetchMs = c.prefillMs - planCostCompute(hw, p.pattern, n, s);
      return { tokens: n, fetch_share: round(fetchMs / c.prefillMs, 4), prefill_s: round(c.prefillMs / 1000, 4) };
    });
    return {
      pattern: `${p.pattern.r1}-${p.pattern.u1}-${p.pattern.r2}`,
      recomputed: p.recomputedLayers,
      max_fetch_share: Math.max(...rows.map((r) => r.fetch_share)),
      rows,
    };
  });
}

const planCostCompute = (hw, pattern, n, s) => planCost(hw.compute, hw.link, pattern, n, s.question).computeMs;

/** A floor as a key without a dot (results paths are dotted): 0.01 → '1pct'. */
export const floorKey = (f) => `${Math.round(f * 1000) / 10}pct`;

const ratio = (a, b) => (a !== null && b > 0 ? round(a / b, 3) : null);

/** The keys of one pair's run: each floor's throughput against full prefill, with the quality it cost. */
function pairKeys(r, s) {
  const base = r.configs['full-prefill'].throughput_at_slo;
  const row = (name) => {
    const c = r.configs[name];
    return {
      throughput_vs_full_prefill_at_slo: ratio(c.throughput_at_slo, base),
      quality_loss: c.at_slo.quality_loss_mean ?? 0,
      test_loss: c.at_slo.test_loss_mean ?? null,
      recomputed_layers: c.at_slo.recomputed_layers_mean ?? null,
    };
  };
  const task = `mnemo-task@${s.headlineFloor * 100}%`;
  return {
    full_prefill_throughput_at_slo: base,
    full_reuse: row('full-reuse'),
    at_task_floor: r.configs[task] ? row(task) : null,
    by_floor: Object.fromEntries(s.floors.map((f) => [floorKey(f), row(`mnemo@${f * 100}%`)])),
    by_floor_cheapest: Object.fromEntries(s.floors.map((f) => [floorKey(f), row(`mnemo-cheapest@${f * 100}%`)])),
    by_floor_fixed_budget: Object.fromEntries(s.floors.map((f) => [floorKey(f), row(`mnemo-fixed-budget@${f * 100}%`)])),
    slo_sensitivity: Object.fromEntries(
      s.sloSensitivity.map((k) => [
        k,
        ratio(
          r.configs[`mnemo@${s.headlineFloor * 100}%`].throughput_at_slo_multiple[k],
          r.configs['full-prefill'].throughput_at_slo_multiple[k],
        ),
      ]),
    ),
  };
}

/** The whole experiment: every trained pair and the constructed one, the headline keys. */
export function droidspeakExperiment({ s = DROIDSPEAK_SETUP, results = readProfiles(), progress = () => {} } = {}) {
  const pairs = profiledPairs(results).filter((p) => p.kind === 'trained' || p.name === s.constructed);
  const shape = workloadShape(s);
  const runs = {};
  const keysBy = {};
  const fetch = {};
  for (const pair of pairs) {
    runs[pair.name] = runPair(pair, s, { shape, progress });
    keysBy[pair.name] = pairKeys(runs[pair.name], s);
    fetch[pair.name] = fetchShares(pair, s);
  }
  const trained = pairs.filter((p) => p.kind === 'trained').map((p) => p.name);
  const avg = (f) => round(mean(trained.map(f)), 3);
  const head = (name) => keysBy[name].by_floor[floorKey(s.headlineFloor)];
  // Fig. 16's plan halves prefill: on each trained frontier, the plan recomputing closest to half the layers.
  const L = MODELS[s.model].layers;
  const half = trained.map((n) => fetch[n].reduce((a, b) => (Math.abs(b.recomputed - L / 2) < Math.abs(a.recomputed - L / 2) ? b : a)));
  const floorRows = (k) =>
    Object.fromEntries(
      s.floors.map(floorKey).map((f) => [
        f,
        {
          throughput_vs_full_prefill_at_slo: avg((n) => keysBy[n][k][f].throughput_vs_full_prefill_at_slo),
          quality_loss: avg((n) => keysBy[n][k][f].quality_loss),
          test_loss: trained.every((n) => keysBy[n][k][f].test_loss !== null) ? avg((n) => keysBy[n][k][f].test_loss) : null,
          recomputed_layers: avg((n) => keysBy[n][k][f].recomputed_layers),
        },
      ]),
    );
  const byFloor = floorRows('by_floor');
  const byFloorCheapest = floorRows('by_floor_cheapest');
  const byFloorFixed = floorRows('by_floor_fixed_budget');
  const reaching2x = s.floors.filter(
    (f) => Math.max(...[byFloor, byFloorCheapest, byFloorFixed].map((b) => b[floorKey(f)].throughput_vs_full_prefill_at_slo)) >= 2,
  );
  const constructed = keysBy[s.constructed];
  const keys = {
    throughput_vs_full_prefill_at_slo: avg((n) => head(n).throughput_vs_full_prefill_at_slo),
    quality_loss_at_slo: avg((n) => head(n).quality_loss),
    test_loss_at_slo: trained.every((n) => head(n).test_loss !== null) ? avg((n) => head(n).test_loss) : null,
    recomputed_layers_at_slo: avg((n) => head(n).recomputed_layers),
    full_reuse_throughput_vs_full_prefill_at_slo: avg((n) => keysBy[n].full_reuse.throughput_vs_full_prefill_at_slo),
    full_reuse_quality_loss: avg((n) => keysBy[n].full_reuse.test_loss),
    cheapest_within_floor_throughput_vs_full_prefill_at_slo: avg(
      (n) => keysBy[n].by_floor_cheapest[floorKey(s.headlineFloor)].throughput_vs_full_prefill_at_slo,
    ),
    by_floor: byFloor,
    by_floor_cheapest: byFloorCheapest,
    by_floor_fixed_budget: byFloorFixed,
    loosest_floor_tested: s.floors.at(-1),
    smallest_floor_reaching_2x: reaching2x.length ? reaching2x[0] : null,
    fetch_share_of_prefill_half_plan_max: Math.max(...half.map((h) => h.max_fetch_share)),
    half_plans: Object.fromEntries(trained.map((n, i) => [n, half[i].pattern])),
    slo_sensitivity: Object.fromEntries(s.sloSensitivity.map((k) => [k, avg((n) => keysBy[n].slo_sensitivity[k])])),
    by_kind: byKind(pairs, keysBy, head),
    best_kind_throughput_vs_full_prefill_at_slo: Math.max(
      ...Object.values(byKind(pairs, keysBy, head)).map((k) => k.best_throughput_vs_full_prefill_at_slo),
    ),
    by_pair: keysBy,
    constructed_throughput_vs_full_prefill_at_slo: constructed
      ? constructed.by_floor[floorKey(s.headlineFloor)].throughput_vs_full_prefill_at_slo
      : null,
    constructed_quality_loss_at_slo: constructed ? constructed.by_floor[floorKey(s.headlineFloor)].test_loss : null,
    constructed_fetch_share_max: fetch[s.constructed]?.length ? Math.max(...fetch[s.constructed].map((f) => f.max_fetch_share)) : null,
  };
  return {
    droidspeak: keys,
    paper: DROIDSPEAK_PAPER,
    setup: {
      ...s,
      hardware: hardwareSummary(s),
      profiles: 'bench/results/droidspeak.json (reference engine, trained pairs; planted pairs constructed)',
    },
    runs,
    fetch_shares: fetch,
  };
}

/** Per pair kind of the paper's Table 1: its pairs' mean and best throughput at the headline floor, top-1 and task metric. */
function byKind(pairs, keysBy, head) {
  const kinds = [...new Set(pairs.filter((p) => p.kind === 'trained').map((p) => p.pairKind))];
  return Object.fromEntries(
    kinds.map((k) => {
      const names = pairs.filter((p) => p.kind === 'trained' && p.pairKind === k).map((p) => p.name);
      const tput = names.map((n) => head(n).throughput_vs_full_prefill_at_slo);
      const task = names.map((n) => keysBy[n].at_task_floor?.throughput_vs_full_prefill_at_slo ?? null);
      return [
        k,
        {
          pairs: names,
          throughput_vs_full_prefill_at_slo: round(mean(tput), 3),
          best_throughput_vs_full_prefill_at_slo: Math.max(...tput),
          test_loss_at_slo: round(mean(names.map((n) => head(n).test_loss ?? 0)), 4),
          task_floor_throughput_vs_full_prefill_at_slo: task.every((t) => t !== null) ? round(mean(task), 3) : null,
          task_floor_best_throughput_vs_full_prefill_at_slo: task.every((t) => t !== null) ? Math.max(...task) : null,
        },
      ];
    }),
  );
}

function hardwareSummary(s) {
  const hw = hardware(s);
  return {
    gpu: hw.compute.gpu.name,
    bf16_tflops: hw.compute.gpu.bf16Flops / 1e12,
    mem_gbs: hw.compute.gpu.memBytesPerS / 1e9,
    model: hw.compute.model.name,
    layers: hw.compute.model.layers,
    link_gbs: hw.link.bytesPerMs / 1e6,
    link_dispatch_ms: hw.link.dispatchMs,
    kv_capacity_tokens: hw.kvCapacityTokens,
  };
}
