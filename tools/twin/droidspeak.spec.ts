import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadFigure } from '@mnemo/testkit';
import { GPUS, INFINIBAND, MODELS, planCost, rooflineCompute } from '@mnemo/twin';
import * as vl from 'vega-lite';
import { profiledPairs, readProfiles, targetFrontier } from './droidspeak-profiles.mjs';
import { DROIDSPEAK_SETUP, droidspeakExperiment, floorKey } from './droidspeak.mjs';
import { droidspeakRobustness } from './droidspeak-robustness.mjs';

// A few dozen requests at a few rates: the experiment's wiring on the committed profiles, not its figures.
const small = { ...DROIDSPEAK_SETUP, requests: 40, rates: [0.2, 1, 5], floors: [0.01, 0.15], sloSensitivity: [5], contexts: [1024, 8192] };
const profiles = readProfiles();

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const figure = await loadFigure(root, 'twin-droidspeak');

describe('the DroidSpeak experiment on the twin', () => {
  const run = droidspeakExperiment({ s: small, results: profiles });

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
    expect(droidspeakExperiment({ s: small, results: profiles })).toEqual(run);
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

  it('renders a Vega-Lite spec with the paper points over the curves', () => {
    const spec = figure(run as never);
    expect(() => vl.compile(spec as never)).not.toThrow();
    expect(JSON.stringify(spec)).toContain('paper Fig. 15');
    expect(JSON.stringify(spec)).toContain('paper Fig. 16');
  });

  it('reruns the keys with each hardware figure at ±20%', () => {
    const rob = droidspeakRobustness({ s: { ...small, requests: 20, floors: [0.01] }, results: profiles });
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
  });
});
