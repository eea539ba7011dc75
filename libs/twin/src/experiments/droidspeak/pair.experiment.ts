// One pair of DroidSpeak's serving experiment on the twin: one modelled A100 serving the derived
// model, HotpotQA-like contexts whose base-model KV and E cache sit on another node behind
// InfiniBand, uniform arrivals at several rates. Full prefill, full reuse and the plans kv-core's
// choosePlan picks at the node's load and each request's wait from the pair's measured profiles.
import { percentile, type ReusePattern } from '@mnemo/kv-core';
import { MODELS } from '../../costs/hardware.tables.js';
import { planCost } from '../../droidspeak/reuse-plan.cost.js';
import { serveReuse, type ReusePolicy } from '../../droidspeak/reuse.server.js';
import { targetFrontier, type ProfiledPair, type TargetPoint } from './droidspeak.profiles.js';
import {
  DROIDSPEAK_SETUP,
  droidspeakHardware,
  mean,
  round,
  workloadShape,
  type DroidspeakHardware,
  type DroidspeakSetup,
  type WorkloadShape,
} from './droidspeak.setup.js';

/** One configuration at one offered rate. */
export interface CurvePoint {
  readonly rate: number;
  readonly achieved_rps: number;
  readonly ttft_p50_s: number;
  readonly ttft_p90_s: number;
  readonly ttft_mean_s: number;
  readonly e2e_mean_s: number;
  readonly recomputed_layers_mean: number;
  readonly quality_loss_mean: number;
  readonly test_loss_mean: number | null;
  readonly fetch_share_of_prefill: number;
}

/** The run at the SLO's rate; no rate meets it: rate and throughput 0, nothing else. */
export type SloPoint = Pick<CurvePoint, 'rate' | 'achieved_rps'> & Partial<CurvePoint>;

export interface ConfigRun {
  readonly throughput_at_slo: number;
  readonly at_slo: SloPoint;
  readonly throughput_at_slo_multiple: Readonly<Record<string, number>>;
  readonly curve: readonly CurvePoint[];
}

export interface PairRun {
  readonly slo_p90_ttft_s: number;
  readonly unloaded_full_prefill_s: number;
  readonly frontier: readonly {
    readonly pattern: string;
    readonly profiled: string;
    readonly recomputed: number;
    readonly quality_loss: number;
    readonly test_loss: number | null;
    readonly prefill_s: number;
  }[];
  readonly configs: Readonly<Record<string, ConfigRun>>;
}

export interface FetchShares {
  readonly pattern: string;
  readonly recomputed: number;
  readonly max_fetch_share: number;
  readonly rows: readonly { readonly tokens: number; readonly fetch_share: number; readonly prefill_s: number }[];
}

const patternKey = (p: ReusePattern) => `${p.r1}-${p.u1}-${p.r2}`;

const requestsAt = (shape: WorkloadShape, rate: number) =>
  shape.u.map((x, i) => ({ arrivalMs: (x * 1000) / rate, context: shape.contexts[i] }));

/** One configuration at one rate: TTFT percentiles and what the plans cost in quality. */
function runAt(
  shape: WorkloadShape,
  hw: DroidspeakHardware,
  s: DroidspeakSetup,
  policy: ReusePolicy,
  rate: number,
  qualityOf: (p: ReusePattern) => number | null,
): CurvePoint {
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
    ttft_p50_s: round((percentile(ttft, 50) ?? NaN) / 1000, 3),
    ttft_p90_s: round((percentile(ttft, 90) ?? NaN) / 1000, 3),
    ttft_mean_s: round(mean(ttft) / 1000, 3),
    e2e_mean_s: round(mean(Array.from(run.e2eMs)) / 1000, 3),
    recomputed_layers_mean: round(mean(Array.from(run.recomputed)), 2),
    quality_loss_mean: round(mean(Array.from(run.qualityLoss)), 4),
    test_loss_mean: tested.every((t): t is number => t !== null) ? round(mean(tested), 4) : null,
    fetch_share_of_prefill: round(mean(fetch) / mean(fetch.map((f, i) => f + compute[i])), 4),
  };
}

/**
 * The largest offered rate whose P90 TTFT meets the SLO: doubling to a failing rate, then
 * bisection to 1%. A finite run can meet it at any rate (the whole run in one burst within the
 * SLO): then the probe at the cap stands, and its achieved rate is the throughput.
 */
function rateAtSlo(probe: (rate: number) => CurvePoint, sloS: number, cap = 1000): SloPoint {
  let lo = 0;
  let hi = 0.05;
  let atLo: CurvePoint | null = null;
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
export function configurations(
  pair: ProfiledPair,
  frontier: readonly TargetPoint[],
  s: DroidspeakSetup,
  sloMs: number,
): Record<string, ReusePolicy> {
  const L = MODELS[s.model].layers;
  const reuse = pair.points.find((p) => p.pattern.r2 === 0);
  if (!reuse) throw new RangeError(`${pair.name}: its profile has no full-reuse point`);
  const configs: Record<string, ReusePolicy> = {
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

/** One pair: every configuration's curve and its throughput at the SLO; `progress(label)` is told before each configuration. */
export function runPair(
  pair: ProfiledPair,
  s: DroidspeakSetup = DROIDSPEAK_SETUP,
  { shape = workloadShape(s), progress = () => {} }: { shape?: WorkloadShape; progress?: (label: string) => void } = {},
): PairRun {
  const hw = droidspeakHardware(s);
  const frontier = targetFrontier(pair, hw.compute, hw.link, s.contextMedian, s.question);
  const full = frontier.find((p) => p.recomputedLayers === hw.compute.model.layers);
  if (!full) throw new RangeError(`${pair.name}: its profile has no full-prefill point`);
  const unloaded = full.prefillMs;
  const sloMs = s.sloOverUnloaded * unloaded;
  const testLoss = new Map(frontier.map((p) => [patternKey(p.pattern), p.source.testLoss]));
  const configs = configurations(pair, frontier, s, sloMs);
  const runs: Record<string, ConfigRun> = {};
  for (const [name, policy] of Object.entries(configs)) {
    progress(`${pair.name} ${name}`);
    // Each plan's held-out loss where the test measured that pattern (full prefill: 0).
    const qualityOf = (p: ReusePattern) => testLoss.get(patternKey(p)) ?? null;
    const probe = (rate: number) => runAt(shape, hw, s, policy, rate, qualityOf);
    const curve = s.rates.map(probe);
    const at = rateAtSlo(probe, sloMs / 1000);
    const sens = Object.fromEntries(s.sloSensitivity.map((k) => [k, rateAtSlo(probe, (k * unloaded) / 1000).achieved_rps]));
    runs[name] = { throughput_at_slo: at.achieved_rps, at_slo: at, throughput_at_slo_multiple: sens, curve };
  }
  return {
    slo_p90_ttft_s: round(sloMs / 1000, 3),
    unloaded_full_prefill_s: round(unloaded / 1000, 3),
    frontier: frontier.map((p) => ({
      pattern: patternKey(p.pattern),
      profiled: p.source.key,
      recomputed: p.recomputedLayers,
      quality_loss: round(1 - p.quality, 4),
      test_loss: p.source.testLoss,
      prefill_s: round(p.prefillMs / 1000, 4),
    })),
    configs: runs,
  };
}

/**
 * Fig. 16's breakdown on the target: for each plan of a pair's frontier that both fetches and
 * recomputes, the fetch's share of the unloaded prefill at each context length.
 */
export function fetchShares(pair: ProfiledPair, s: DroidspeakSetup = DROIDSPEAK_SETUP): FetchShares[] {
  const hw = droidspeakHardware(s);
  const L = hw.compute.model.layers;
  const plans = targetFrontier(pair, hw.compute, hw.link, s.contextMedian, s.question).filter(
    (p) => p.recomputedLayers > 0 && p.recomputedLayers < L,
  );
  return plans.map((p) => {
    const rows = s.contexts.map((n) => {
      const [c] = targetFrontier({ ...pair, points: [p.source] }, hw.compute, hw.link, n, s.question);
      const fetchMs = c.prefillMs - planCost(hw.compute, hw.link, p.pattern, n, s.question).computeMs;
      return { tokens: n, fetch_share: round(fetchMs / c.prefillMs, 4), prefill_s: round(c.prefillMs / 1000, 4) };
    });
    return {
      pattern: patternKey(p.pattern),
      recomputed: p.recomputedLayers,
      max_fetch_share: Math.max(...rows.map((r) => r.fetch_share)),
      rows,
    };
  });
}
