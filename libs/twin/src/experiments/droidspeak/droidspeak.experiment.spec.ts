import { GPUS, INFINIBAND, MODELS } from '../../costs/hardware.tables.js';
import { rooflineCompute } from '../../costs/roofline.compute.js';
import { planCost } from '../../droidspeak/reuse-plan.cost.js';
import type { TargetCheck } from '../shared/experiment.ports.js';
import { droidspeakExperiment } from './droidspeak.experiment.js';
import { profiledPairs, targetFrontier, type DroidspeakProfiles } from './droidspeak.profiles.js';
import { droidspeakRobustness } from './droidspeak.robustness.js';
import { DROIDSPEAK_SETUP, floorKey } from './droidspeak.setup.js';

// A few dozen requests at a few rates: the experiment's wiring on measured profiles, not its figures.
const small = { ...DROIDSPEAK_SETUP, requests: 40, rates: [0.2, 1, 5], floors: [0.01, 0.15], sloSensitivity: [5], contexts: [1024, 8192] };
// Profiles the reference engine measured (bench/results/droidspeak.json, which the twin does not read): one trained pair of
// each of the paper's kinds and the constructed pair, the fields the experiment reads. The whole file runs in
// tools/twin/droidspeak.figure.spec.ts.
const profiles: DroidspeakProfiles = (await import('./droidspeak.profiles.fixture.json', { with: { type: 'json' } })).default;

describe('the DroidSpeak experiment on the twin', () => {
  const run = droidspeakExperiment({ s: small, profiles });

  it('runs every trained pair and the constructed one with every configuration, and writes every key, the same on every run', () => {
    const trained = profiledPairs(profiles)
      .filter((p) => p.kind === 'trained')
      .map((p) => p.name);
    expect(Object.keys(run.runs).sort()).toEqual([...trained, small.constructed].sort());
    // The trained pairs' profiles carry task losses, so they also run the task-metric floor; the constructed pair's do not.
    for (const [name, r] of Object.entries(run.runs))
      expect(Object.keys(r.configs).sort()).toEqual(
        [
          'full-prefill',
          'full-reuse',
          'mnemo-cheapest@1%',
          'mnemo-cheapest@15%',
          'mnemo-fixed-budget@1%',
          'mnemo-fixed-budget@15%',
          ...(name === small.constructed ? [] : ['mnemo-task@1%']),
          'mnemo@1%',
          'mnemo@15%',
        ].sort(),
      );
    for (const k of [
      'throughput_vs_full_prefill_at_slo',
      'quality_loss_at_slo',
      'full_reuse_throughput_vs_full_prefill_at_slo',
      'fetch_share_of_prefill_half_plan_max',
    ] as const)
      expect(typeof run.droidspeak[k]).toBe('number');
    expect(Object.keys(run.droidspeak.by_floor)).toEqual(['1pct', '15pct']);
    // Every pair kind of the paper's Table 1 the profiles hold, each with its pairs' throughput at the 1% floor under both metrics.
    expect(Object.keys(run.droidspeak.by_kind).sort()).toEqual(['base_full_ft', 'base_lora', 'full_ft_pair', 'lora_pair']);
    for (const k of Object.values(run.droidspeak.by_kind)) {
      expect(k.pairs.length).toBeGreaterThan(0);
      expect(typeof k.throughput_vs_full_prefill_at_slo).toBe('number');
      expect(typeof k.task_floor_throughput_vs_full_prefill_at_slo).toBe('number');
    }
    expect(droidspeakExperiment({ s: small, profiles })).toEqual(run);
  });

  it('carries each 8-layer profile to 32 layers by fraction, priced on the A100 and InfiniBand', () => {
    const compute = rooflineCompute(GPUS.A100, MODELS['llama-3.1-8b']);
    for (const pair of profiledPairs(profiles).filter((p) => p.layers === 8)) {
      const frontier = targetFrontier(pair, compute, INFINIBAND.HDR, 10_000, 64);
      for (const p of frontier) {
        expect(p.recomputedLayers).toBe(4 * (p.source.pattern.r1 + p.source.pattern.r2 - p.source.pattern.u1));
        const c = planCost(compute, INFINIBAND.HDR, p.pattern, 10_000, 64);
        expect(p.prefillMs).toBeCloseTo(c.fetchMs + c.computeMs, 9);
      }
    }
  });

  it("never runs a plan outside the floor, and a looser floor's cheapest plans serve at least as many requests", () => {
    for (const r of Object.values(run.runs))
      for (const f of small.floors) {
        for (const c of r.configs[`mnemo@${f * 100}%`]!.curve) expect(c.quality_loss_mean).toBeLessThanOrEqual(f + 1e-9);
        for (const c of r.configs[`mnemo-cheapest@${f * 100}%`]!.curve) expect(c.quality_loss_mean).toBeLessThanOrEqual(f + 1e-9);
        for (const c of r.configs[`mnemo-fixed-budget@${f * 100}%`]!.curve) expect(c.quality_loss_mean).toBeLessThanOrEqual(f + 1e-9);
      }
    // Under the task metric the loss each request was charged is the plan's task loss: within the floor too.
    for (const r of Object.values(run.runs))
      for (const c of r.configs['mnemo-task@1%']?.curve ?? []) expect(c.quality_loss_mean).toBeLessThanOrEqual(0.01 + 1e-9);
    const k = run.droidspeak;
    expect(k.by_floor_cheapest[floorKey(0.15)]!.throughput_vs_full_prefill_at_slo).toBeGreaterThanOrEqual(
      k.by_floor_cheapest[floorKey(0.01)]!.throughput_vs_full_prefill_at_slo,
    );
    expect(k.full_reuse_throughput_vs_full_prefill_at_slo).toBeGreaterThan(k.throughput_vs_full_prefill_at_slo);
  });

  it('reports P90 TTFT rising with the rate, the SLO rate below every curve point that misses it, and no more served than offered', () => {
    for (const r of Object.values(run.runs))
      for (const [name, c] of Object.entries(r.configs)) {
        // A plan choice with a budget moves to cheaper plans as load rises, so its P90 may dip; a fixed plan's only rises.
        if (!name.startsWith('mnemo@') && !name.startsWith('mnemo-fixed-budget@') && !name.startsWith('mnemo-task@'))
          expect(c.curve.map((p) => p.ttft_p90_s)).toEqual([...c.curve.map((p) => p.ttft_p90_s)].sort((a, b) => a - b));
        expect(c.at_slo.ttft_p90_s).toBeLessThanOrEqual(r.slo_p90_ttft_s);
        for (const p of c.curve) if (p.ttft_p90_s > r.slo_p90_ttft_s) expect(p.rate).toBeGreaterThan(c.at_slo.rate);
        expect(c.throughput_at_slo).toBeLessThanOrEqual(c.at_slo.rate);
      }
  });

  it('reruns the keys with each hardware figure at ±20%', () => {
    const asked = new Set<string>();
    const holds: TargetCheck = (path) => (asked.add(path), true);
    const rob = droidspeakRobustness({ s: { ...small, requests: 20, floors: [0.01] }, profiles, holds });
    expect(rob.rows.map((r) => `${r.figure}×${r.scale}`)).toEqual([
      'gpu_flops×0.8',
      'gpu_flops×1.2',
      'gpu_mem×0.8',
      'gpu_mem×1.2',
      'infiniband×0.8',
      'infiniband×1.2',
    ]);
    // A slower link fetches for longer: the fetch share of the same plan grows.
    const [slow, fast] = rob.rows.filter((r) => r.figure === 'infiniband');
    expect(slow!.fetch_share_of_prefill_half_plan_max).toBeGreaterThan(fast!.fetch_share_of_prefill_half_plan_max);
    // The headline of every row is judged at its results path.
    expect(rob.target_met_in_every_case).toBe(true);
    expect([...asked]).toEqual(['droidspeak.throughput_vs_full_prefill_at_slo']);
  });
});
