// FastSwitch's experiment (§4–5) on the twin: Llama-8B on a modelled A10 with 60 GB of host swap
// space, 1,000 ShareGPT-like conversations arriving as a Poisson process (1 request/s on
// average), priorities updated by a Markov or Random trace every 1/f iterations. vLLM-style
// per-block, per-layer swaps against FastSwitch's block groups, adaptive asynchronous swap-in and
// host-copy reuse — all of them Mnemo's kv-core code (libs/twin/src/swap) — with the per-call
// dispatch of a copy swept, since it decides how much grouping pays.
import {
  baselineCheck,
  derivedDispatchMs,
  deviceKvBlocks,
  dispatchBandMs,
  FASTSWITCH,
  GPUS,
  HOST_MEMORY,
  MEASURED_DISPATCH_MS,
  MODELS,
  pcieLink,
  percentile,
  PriorityTrace,
  rooflineCompute,
  scaleGpu,
  SeededRng,
  SwapInstanceSim,
  VLLM_SWAP,
} from '@mnemo/twin';
import { holds, targetOf, workload } from '@mnemo/testkit';
import { FASTSWITCH_WORKLOAD } from './paper-workload.mjs';

/** Every input, with its source. */
export const FASTSWITCH_SETUP = {
  gpu: 'A10', // FastSwitch §4: LLaMA-8B on an NVIDIA A10 24 GB
  model: 'llama-3.1-8b', // Llama-3-8B's architecture (32 layers, 8 KV heads of 128): the tables' Llama-3.1-8B
  // Llama-3-8B's context (config.json max_position_embeddings 8,192): a conversation ends at the turn that would pass it.
  contextTokens: 8192,
  hostBytes: HOST_MEMORY.fastswitchSwapBytes, // §4: 60 GB of CPU swap space per GPU
  conversations: 1000, // §4: 1,000 multi-turn conversations (drawn, and their statistics reported)
  // Each run serves the first 300 of them: where vLLM falls behind its arrivals its queue grows through the run and
  // every iteration scans it, so all 1,000 per run would not fit the experiment's 15 minutes on this machine.
  runConversations: 300,
  // §4: Poisson arrivals at 1 request/s. The modelled A10 cannot carry that on this workload (docs/twin-experiments.md
  // §FastSwitch: its 25.8K-token KV holds ~10 requests of the mean 2.4K-token prompt, each decoding 338 tokens at
  // ~36 ms a step, plus every turn's prefill of its history), so queues grow through the run and every percentile
  // measures its length. The run uses a quarter of the paper's rate; `load` in the results shows 0.5 req/s.
  paperRequestsPerS: 1,
  requestsPerS: 0.25,
  // vLLM 0.3.3 defaults: max_num_seqs 256, max_num_batched_tokens max(max_model_len, 2,048).
  maxBatch: 256,
  maxPrefillTokens: 8192,
  groupBlocks: 60, // §3.1: the first block group of a request is 60 blocks (~1,000 tokens)
  segmentBlocks: 64, // host-copy segment: the engine swapper's default (libs/engine KvSwapper)
  frequencies: [0.04, 0.02], // §4: 0.04 for LLaMA-8B, 0.02 as for Qwen-32B
  patterns: ['markov', 'random'],
  // Trace shape (stated assumptions; §4 gives none): 8 levels; Markov moves a level with probability 0.5 per update.
  levels: 8,
  moveChance: 0.5,
  // Per-call dispatch swept (ms): Mnemo's C++ path measured on the H200 (2.47 µs) up to §2.2's upper bound. Two regimes
  // are headlines: the paper's (§2.2: dispatch is 90–95% of a copy that executes in 10 µs, so ≥ 90 µs; its lowest, the
  // baseline at its cheapest the paper allows) and ours (the measured 2.47 µs). Table 1's reading (117 µs) stays on the curve.
  dispatchMs: [MEASURED_DISPATCH_MS, 0.01, 0.03, dispatchBandMs()[0], derivedDispatchMs(), dispatchBandMs()[1]],
  seed: 20261127,
  // The curve runs each point on this many seeds (workload and trace drawn anew) and keeps the median ratio: a P99 of
  // ~1,500 requests moves with which requests happen to be preempted when, whatever the mechanism costs.
  curveSeeds: 3,
};

export const SYSTEMS = {
  vllm: VLLM_SWAP,
  fastswitch: FASTSWITCH,
  'groups-only': { groups: true, asyncSwapIn: false, reuse: false },
  'async-only': { groups: false, asyncSwapIn: true, reuse: false },
  'reuse-only': { groups: false, asyncSwapIn: false, reuse: true },
};

/** The paper's published points (Llama-8B on an A10). */
export const PAPER = {
  p99_ttft_speedup: [3.7, 4.1], // Fig. 8 / §5.1.1
  p999_tbt_speedup: [2.0, 2.7], // Fig. 8 / §5.1.1
  swap_out_reduction: 0.53, // Table 1: 122,030 → 58,187 blocks
  groups_switch_overhead_speedup: 3.11, // Fig. 10: block groups alone
  blocks_per_group: 20, // §3.1: about 20 blocks per block group
};

/** The headline keys' paper bands (libs/testkit/src/results/targets.ts): an overshoot misses as a shortfall does. */
export const TARGETS = Object.fromEntries(
  ['p99_ttft_ratio', 'p999_tbt_ratio', 'swap_out_reduction'].map((k) => [k, targetOf('twin-fastswitch', `fastswitch.${k}`)]),
);
export const inBands = (x) => Object.entries(TARGETS).every(([k, t]) => holds(x[k], t));

export const round = (x, d = 3) => (x === null || !Number.isFinite(x) ? x : Math.round(x * 10 ** d) / 10 ** d);

/**
 * The conversations: the paper workload's generator (ShareGPT-fitted turns and lengths) cut at
 * the model's context; think time before a turn is reading the last reply and typing the next
 * (human speeds); conversation starts are Poisson at rate / mean turns, so requests arrive at
 * `requestsPerS` on average.
 */
export function fastswitchConversations(s = FASTSWITCH_SETUP) {
  const base = workload({ ...FASTSWITCH_WORKLOAD, sessions: s.conversations, seed: s.seed });
  const convs = base
    .map((b) => {
      const turns = [];
      let history = b.system.length + b.doc.length;
      for (let i = 0; i < b.turns.length; i++) {
        const t = b.turns[i];
        const user = t.user.length + (i === 0 ? history : 0);
        if (i === 0) history = 0;
        if (history + user + t.reply > s.contextTokens) break;
        const next = b.turns[i + 1];
        turns.push({ userTokens: user, replyTokens: t.reply, thinkMs: t.readMs + (next?.typeMs ?? 0) });
        history += user + t.reply;
      }
      return turns;
    })
    .filter((t) => t.length > 0);
  const meanTurns = convs.reduce((a, t) => a + t.length, 0) / convs.length;
  const rng = new SeededRng(s.seed);
  let at = 0;
  return convs.slice(0, s.runConversations ?? convs.length).map((turns) => {
    at += (-Math.log(1 - rng.next()) * meanTurns * 1000) / s.requestsPerS;
    return { arrivalMs: at, turns };
  });
}

/** The hardware one run uses, each figure scalable (the robustness table's ±20%; `s.kvScale` shrinks the KV for the spec's small runs). */
export function hardware(s = FASTSWITCH_SETUP, scale = {}) {
  const gpu = scaleGpu(GPUS[s.gpu], { flops: scale.flops, mem: scale.mem });
  const model = MODELS[s.model];
  return {
    gpu,
    model,
    compute: rooflineCompute(gpu, model),
    deviceBlocks: Math.floor(deviceKvBlocks(gpu, model) * (s.kvScale ?? 1) * (scale.capacity ?? 1)),
    pcie: pcieLink(gpu.pcieGen),
  };
}

/** One run: a system at a dispatch cost under one trace. */
export function runOnce({ system, dispatchMs, pattern, frequency, s = FASTSWITCH_SETUP, convs, scale = {} }) {
  const hw = hardware(s, scale);
  const link = { dispatchMs: dispatchMs * (scale.dispatch ?? 1), bytesPerMs: hw.pcie.bytesPerMs * (scale.pcie ?? 1) };
  const trace = new PriorityTrace({ pattern, levels: s.levels, moveChance: s.moveChance, seed: s.seed });
  const sim = new SwapInstanceSim(
    {
      compute: hw.compute,
      model: hw.model,
      link,
      deviceBlocks: hw.deviceBlocks,
      hostBytes: s.hostBytes,
      maxBatch: s.maxBatch,
      maxPrefillTokens: s.maxPrefillTokens,
      groupBlocks: s.groupBlocks,
      segmentBlocks: s.segmentBlocks,
      mechanisms: SYSTEMS[system],
      trace,
      updateEvery: Math.round(1 / frequency),
    },
    convs,
  );
  const r = sim.run();
  return {
    requests: r.requests,
    p99_ttft_ms: round(percentile(r.ttftMs, 99)),
    p999_tbt_ms: round(percentile(r.tbtMs, 99.9)),
    p50_ttft_ms: round(percentile(r.ttftMs, 50)),
    swap_out_blocks: r.swapOutBlocks,
    swap_outs: r.swapOuts,
    swap_out_calls: r.swapOutCalls,
    reused_blocks: r.reusedBlocks,
    swap_in_blocks: r.swapInBlocks,
    async_swap_ins: r.asyncSwapIns,
    recomputes: r.recomputes,
    switch_stall_s: round(r.switchStallMs / 1000),
    switch_share: round(r.switchStallMs / r.endMs, 4),
    compute_s: round(r.computeMs / 1000),
    iterations: r.iterations,
    simulated_s: round(r.endMs / 1000, 1),
    blocks_per_call: round(r.blocksPerCall, 2),
  };
}

const RATIO_KEYS = ['p99_ttft_ratio', 'p999_tbt_ratio', 'swap_out_reduction', 'switch_overhead_ratio'];
const medianOf = (xs) => {
  const v = [...xs].sort((a, b) => a - b);
  return v.length % 2 ? v[(v.length - 1) / 2] : round((v[v.length / 2 - 1] + v[v.length / 2]) / 2);
};

/** The paper's regime: the lowest per-call dispatch §2.2 allows (90% of a copy that executes in 10 µs: 90 µs). */
export const paperDispatchMs = () => dispatchBandMs()[0];

/**
 * The paper's published baseline figures beside the twin's (error = twin ÷ paper − 1). Table 1 is
 * §5.3.3's KV-reuse microbenchmark (its model and trace not stated): its ratios are compared with the
 * twin's reuse-only run against vLLM. §2.2's dispatch share holds by construction in the paper's regime.
 */
export function fastswitchBaselineChecks({ at, ablation, ours, reuseOurs, groupsOurs, s }) {
  const reuse = ablation['reuse-only'];
  const v = at.vllm;
  const copy = 128 * 1024; // §2.2's 128 KB copy
  const share = (d) => d / (d + copy / hardware(s).pcie.bytesPerMs);
  const why = {
    blocks:
      "the twin's run re-swaps the same conversations many times under priority churn, so reuse saves more blocks than " +
      "Table 1's microbenchmark of one swap-out each",
    groups:
      "at the paper's dispatch the twin's vLLM pays one call per block per layer for K and V (64 per block), so grouping saves nearly all of its stall",
  };
  return {
    table1_blocks_reuse_over_traditional: baselineCheck(0.48, reuse.swap_out_blocks / v.swap_out_blocks, 'Table 1 (§5.3.3)', why.blocks),
    table1_operations_reuse_over_traditional: baselineCheck(0.82, reuse.swap_outs / v.swap_outs, 'Table 1 (§5.3.3)', why.blocks),
    table1_latency_reuse_over_traditional: baselineCheck(0.43, reuse.switch_stall_s / v.switch_stall_s, 'Table 1 (§5.3.3)', why.blocks),
    table1_latency_reuse_over_traditional_measured_dispatch: baselineCheck(
      0.43,
      reuseOurs.switch_stall_s / ours.vllm.switch_stall_s,
      'Table 1 (§5.3.3), the twin at the measured 2.47 µs dispatch',
      why.blocks,
    ),
    fig10_groups_switch_overhead: baselineCheck(
      3.11,
      ablation['groups-only'].switch_overhead_ratio,
      'Fig. 10 (block groups alone, up to 3.11×)',
      why.groups,
    ),
    fig10_groups_switch_overhead_measured_dispatch: baselineCheck(
      3.11,
      ratios(ours.vllm, groupsOurs).switch_overhead_ratio,
      'Fig. 10 (block groups alone), the twin at the measured 2.47 µs dispatch',
      why.groups,
    ),
    s22_dispatch_share_of_128kb_copy: baselineCheck(
      0.925,
      share(paperDispatchMs()),
      '§2.2 (dispatch 90–95% of a 128 KB copy on the A10; mid-point)',
    ),
  };
}

/** Why the paper-regime headlines land where they do, traced from the runs' own figures. */
/** The same from a results file's own figures (`npm run twin -- bands` recomputes them). */
export function fastswitchCausesOf(json) {
  const at = json.curve.find((p) => p.dispatch_us === json.fastswitch.dispatch_us);
  const ours = json.curve.find((p) => p.dispatch_us === json.fastswitch.measured_dispatch.dispatch_us);
  return fastswitchCauses(at, ours, json.setup.workload.arrival_span_s);
}

function fastswitchCauses(at, ours, spanS) {
  const span = round(spanS, 0);
  const v = at.vllm;
  const stall =
    `at ${at.dispatch_us} µs per call the twin's vLLM makes ${v.swap_out_calls} swap-out calls (64 per block: K and V of ` +
    `every layer) in ${v.swap_outs} preemptions and stands still for copies ${round(v.switch_share * 100, 1)}% of the run ` +
    `(${v.simulated_s} s simulated for ${span} s of arrivals); at the measured ${ours.dispatch_us} µs the same ratio is ` +
    `${ours.p99_ttft_ratio}, so the paper's vLLM must issue fewer or cheaper calls than §2.2's reading implies. Both of the ` +
    "paper's systems also prefill each turn with its prefix kept (§4, Implementation), where the twin's recompute the " +
    'whole history each turn (vLLM 0.3.3 as released): more prefill work, so more preemptions and swaps for vLLM';
  return {
    'fastswitch.p99_ttft_ratio': stall,
    'fastswitch.p999_tbt_ratio': stall,
    'fastswitch.swap_out_reduction':
      "Table 1 is §5.3.3's microbenchmark of host-copy reuse alone; the twin's figure adds the swaps that priority scheduling " +
      `and grouping save in a run of ${v.swap_outs} preemptions`,
  };
}

/** FastSwitch over vLLM: the four headline ratios. */
export function ratios(v, f) {
  return {
    p99_ttft_ratio: round(v.p99_ttft_ms / f.p99_ttft_ms),
    p999_tbt_ratio: round(v.p999_tbt_ms / f.p999_tbt_ms),
    swap_out_reduction: round(1 - f.swap_out_blocks / v.swap_out_blocks),
    switch_overhead_ratio: round(v.switch_stall_s / f.switch_stall_s),
  };
}

/**
 * The experiment: vLLM and FastSwitch over the dispatch sweep (Markov, f = 0.04); both again at the
 * derived dispatch under the other traces; the three mechanisms alone at the derived dispatch.
 */
export function fastswitchExperiment({ s = FASTSWITCH_SETUP, progress = () => {} } = {}) {
  const convs = fastswitchConversations(s);
  // The paper's regime: the lowest dispatch §2.2 describes (the headline and its traces, ablation and load runs).
  const derived = paperDispatchMs();
  const main = { pattern: s.patterns[0], frequency: s.frequencies[0] };
  const traces = s.patterns
    .flatMap((pattern) => s.frequencies.map((frequency) => ({ pattern, frequency })))
    .filter((t) => t.pattern !== main.pattern || t.frequency !== main.frequency);
  const seeds = Array.from({ length: s.curveSeeds ?? 1 }, (_, i) => s.seed + i);
  const seeded = seeds.map((seed, i) => (i === 0 ? { s, convs } : { s: { ...s, seed }, convs: fastswitchConversations({ ...s, seed }) }));
  const total = s.dispatchMs.length * 2 * seeds.length + traces.length * 2 + 3 + 2 + 2;
  let done = 0;
  const run = (system, dispatchMs, t, at = seeded[0]) => {
    progress(done++, total, `${system} · ${t.pattern} f=${t.frequency} · dispatch ${round(dispatchMs * 1000, 1)} µs · seed ${at.s.seed}`);
    return runOnce({ system, dispatchMs, ...t, s: at.s, convs: at.convs });
  };
  // Each point: the first seed's runs in full, the ratios per seed, and their median (the curve's value).
  const curve = s.dispatchMs.map((d) => {
    const bySeed = seeded.map((at) => {
      const vllm = run('vllm', d, main, at);
      const fastswitch = run('fastswitch', d, main, at);
      return { seed: at.s.seed, vllm, fastswitch, ...ratios(vllm, fastswitch) };
    });
    const median = Object.fromEntries(RATIO_KEYS.map((k) => [k, medianOf(bySeed.map((r) => r[k]))]));
    return {
      dispatch_us: round(d * 1000, 1),
      vllm: bySeed[0].vllm,
      fastswitch: bySeed[0].fastswitch,
      ...median,
      by_seed: bySeed.map(({ seed, ...r }) => ({ seed, ...Object.fromEntries(RATIO_KEYS.map((k) => [k, r[k]])) })),
    };
  });
  const at = curve.find((p) => p.dispatch_us === round(derived * 1000, 1));
  const ours = curve.find((p) => p.dispatch_us === round(MEASURED_DISPATCH_MS * 1000, 1));
  const byTrace = traces.map((t) => {
    const vllm = run('vllm', derived, t);
    const fastswitch = run('fastswitch', derived, t);
    return { ...t, vllm, fastswitch, ...ratios(vllm, fastswitch) };
  });
  const ablation = Object.fromEntries(
    ['groups-only', 'async-only', 'reuse-only'].map((system) => {
      const r = run(system, derived, main);
      return [system, { ...r, ...ratios(at.vllm, r) }];
    }),
  );
  // Block groups alone at the measured dispatch: what grouping buys on H200-class dispatch (Fig. 10's ratio there).
  const groupsOurs = run('groups-only', MEASURED_DISPATCH_MS, main);
  const reuseOurs = run('reuse-only', MEASURED_DISPATCH_MS, main);
  // The load the run steps back from (the setup's note): both systems at twice the rate.
  const loadSetup = { ...s, requestsPerS: 2 * s.requestsPerS };
  const loadConvs = fastswitchConversations(loadSetup);
  const loadRun = (system) => {
    progress(done++, total, `${system} · load ${loadSetup.requestsPerS} req/s`);
    return runOnce({ system, dispatchMs: derived, ...main, s: loadSetup, convs: loadConvs });
  };
  const lv = loadRun('vllm');
  const lf = loadRun('fastswitch');
  const load = {
    requests_per_s: loadSetup.requestsPerS,
    conversations: loadConvs.length,
    arrival_span_s: round(loadConvs[loadConvs.length - 1].arrivalMs / 1000, 1),
    vllm: lv,
    fastswitch: lf,
    ...ratios(lv, lf),
  };
  progress(total, total, 'done');
  const requests = convs.reduce((a, c) => a + c.turns.length, 0);
  // Each turn's prompt is the whole history plus what the user adds (no prefix cache in vLLM 0.3.3).
  const promptTokens = convs.reduce((a, c) => {
    let history = 0;
    return (
      a +
      c.turns.reduce((sum, t) => {
        const prompt = history + t.userTokens;
        history = prompt + t.replyTokens;
        return sum + prompt;
      }, 0)
    );
  }, 0);
  return {
    setup: {
      ...s,
      dispatchMs: s.dispatchMs.map((d) => round(d, 4)),
      derived_dispatch_us: round(derived * 1000, 1),
      dispatch_band_us: dispatchBandMs().map((d) => round(d * 1000, 1)),
      device_kv_blocks: hardware(s).deviceBlocks,
      device_kv_tokens: hardware(s).deviceBlocks * 16,
      pcie_gb_per_s: round(hardware(s).pcie.bytesPerMs / 1e6, 2),
      workload: {
        conversations: convs.length,
        requests,
        mean_turns: round(requests / convs.length, 2),
        mean_prompt_tokens: Math.round(promptTokens / requests),
        arrival_span_s: round(convs[convs.length - 1].arrivalMs / 1000, 1),
      },
    },
    fastswitch: {
      p99_ttft_ratio: at.p99_ttft_ratio,
      p999_tbt_ratio: at.p999_tbt_ratio,
      swap_out_reduction: at.swap_out_reduction,
      switch_overhead_ratio: at.switch_overhead_ratio,
      groups_only_switch_overhead_ratio: ablation['groups-only'].switch_overhead_ratio,
      blocks_per_call: at.fastswitch.blocks_per_call,
      targets_met: inBands(at),
      dispatch_us: round(derived * 1000, 1),
      // Ours: the same runs at the per-call dispatch measured on the H200; no paper band applies.
      measured_dispatch: {
        dispatch_us: ours.dispatch_us,
        p99_ttft_ratio: ours.p99_ttft_ratio,
        p999_tbt_ratio: ours.p999_tbt_ratio,
        swap_out_reduction: ours.swap_out_reduction,
        switch_overhead_ratio: ours.switch_overhead_ratio,
        groups_only_switch_overhead_ratio: ratios(ours.vllm, groupsOurs).switch_overhead_ratio,
        vllm_switch_share: ours.vllm.switch_share,
      },
    },
    baseline_check: fastswitchBaselineChecks({ at, ablation, ours, reuseOurs, groupsOurs, s }),
    // Shown only for a headline outside its band (libs/testkit/src/results/report.ts headlinesInBand).
    disagreement_causes: fastswitchCauses(at, ours, convs[convs.length - 1].arrivalMs / 1000),
    curve,
    by_trace: byTrace,
    ablation,
    load,
    paper: PAPER,
  };
}
