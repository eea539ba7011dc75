import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { baseSessions, holds, loadFigure, PAPER_WORKLOAD, paperSessions, paperWorkloadStats, targetOf } from '@mnemo/testkit';
import {
  SYMPHONY_HARDWARE,
  SYMPHONY_RUN,
  symphonyBaselineChecks,
  symphonyExperiment,
  symphonyRobustness,
  type SymphonyPorts,
  type SymphonySetup,
} from '@mnemo/twin';
import * as vl from 'vega-lite';

// The experiment lives in libs/twin (experiments/symphony, where its keys are specified on curves made up there); it
// runs here, as `npm run twin -- symphony` runs it, on the papers' workload drawn by testkit's generator and judged
// against the targets registered in testkit.
const ports: SymphonyPorts = {
  base: (thinkCompression, seed) => baseSessions({ ...PAPER_WORKLOAD, thinkCompression, seed: PAPER_WORKLOAD.seed + seed - 1 }),
  systemTokens: PAPER_WORKLOAD.systemTokens,
  holds: (path, value) => holds(value, targetOf('twin-symphony', path)),
};

// A small cluster for a few simulated seconds: the experiment's wiring, not its figures.
const tiny: SymphonySetup = {
  ...SYMPHONY_RUN,
  users: [4, 12],
  allSystemsUsers: [12],
  imbalanceUsers: 12,
  imbalanceWindowMs: 10_000,
  compareUsers: 12,
  variantUsers: 12,
  rampMs: 1000,
  warmMs: 4000,
  untilMs: 12_000,
  thinkCompression: 60,
  conductorSweep: { seed: 2, users: 4, thresholds: [2, 3] },
  routingSeeds: [4],
};
const hw = { ...SYMPHONY_HARDWARE, instances: 2 };

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const figure = await loadFigure(root, 'twin-symphony');

describe('the Symphony experiment on the twin', () => {
  let first: ReturnType<typeof symphonyExperiment>;
  beforeAll(() => {
    first = symphonyExperiment(ports, { o: tiny, hw, now: () => 0 });
  }, 120_000);

  it('runs every system and variant and writes every key', () => {
    expect(Object.keys(first.curves).sort()).toEqual([
      'conductor',
      'conductor-aa',
      'conductor-seed4',
      'infercept',
      'infercept-fig15',
      'llmd',
      'llmd-aa',
      'llmd-seed4',
      'recompute',
      'symphony',
      'symphony-aa',
      'symphony-missed10',
      'symphony-seed4',
      'symphony-spurious60',
      'vllm-paper',
    ]);
    // The paper's vLLM recomputes every turn (no prefix cache), the best vLLM keeps one: the headlines divide by the first.
    expect(first.curves['vllm-paper'][12].prefix_hit_rate).toBe(0);
    expect(first.keys.vllm_baseline).toBe('vllm-paper');
    expect(first.keys.ttft_vs_vllm).toBe(Math.max(...Object.values(first.keys.by_users.ttft_vs_vllm).map(Number)));
    // Fig. 15's metric: users held per instance over the measured window.
    expect(first.curves.infercept[12].users_per_instance).toHaveLength(2);
    const checks = symphonyBaselineChecks(first.curves, tiny, hw);
    expect(checks.fig11_vllm_tpot_64_users_ms.paper).toBe(18.5);
    expect(checks.fig11_vllm_tpot_64_users_ms.twin).toBe(first.curves['vllm-paper'][4].tpot_mean_ms);
    expect(first.curves.symphony[4].requests).toBeGreaterThan(0);
    for (const k of [
      'ttft_vs_vllm',
      'tpot_vs_vllm',
      'ttft_vs_infercept',
      'ttft_vs_llmd',
      'ttft_vs_conductor',
      'infercept_imbalance_256',
      'missed10_degradation',
      'spurious60_degradation',
    ] as const)
      expect(typeof first.keys[k]).toBe('number');
    expect(first.curves.recompute[12].routing.least_loaded).toBeGreaterThan(0);
    // Fig. 15's imbalance on its own InferCept run, measured for its window after the warm-up.
    expect(first.curves['infercept-fig15'][12].measured_window_s).toBe(10);
    expect(first.keys.infercept_imbalance_256).toBe(first.curves['infercept-fig15'][12].imbalance_users_max_over_median);
    // Conductor ran at every count with the threshold its sweep on another seed found best.
    expect(Object.keys(first.curves.conductor).map(Number)).toEqual([4, 12]);
    expect(first.conductor_sweep?.rows.map((r) => r.threshold)).toEqual([2, 3]);
    expect([2, 3]).toContain(first.conductor_sweep?.best);
    expect(typeof first.keys.never_behind).toBe('boolean');
    // Symphony again on another seed at every count: the A/A spread the noise-aware verdict reads.
    expect(Object.keys(first.curves['symphony-aa']).map(Number)).toEqual([4, 12]);
    // Its seed draws other sessions: an A/A pass that replayed the same run would measure no noise at all.
    expect(first.curves['symphony-aa'][12]).not.toEqual(first.curves.symphony[12]);
    expect(first.keys.noise?.aa_spread_ttft_p99[12]).toBeGreaterThanOrEqual(0);
    expect(typeof first.keys.never_behind_beyond_noise?.value).toBe('boolean');
    // The routing baselines ran on the A/A seed too, with conductor's swept threshold: the two-seed comparison reads them.
    expect(Object.keys(first.curves['conductor-aa']).map(Number)).toEqual([4, 12]);
    expect(first.keys.over_seeds?.seeds).toEqual([tiny.seed, tiny.aaSeed, ...(tiny.routingSeeds ?? [])]);
    expect(typeof first.keys.never_behind_over_seeds?.value).toBe('boolean');
    // The same over the requests both runs of a seed measured; the per-request TTFTs are not written.
    expect(first.keys.paired_over_seeds?.common_share.conductor[12]).toBeGreaterThan(0);
    expect(typeof first.keys.never_behind_paired?.value).toBe('boolean');
    expect(first.curves.symphony[12]).not.toHaveProperty('ttft_by_request');
    expect(first.curves.infercept[12].routing.session_home).toBeGreaterThan(0);
  });

  it('is deterministic for a seed', () => {
    const o = { ...tiny, users: [12], systems: ['symphony'], everyCount: ['symphony'], allSystemsUsers: [] };
    const again = symphonyExperiment(ports, { o, hw, now: () => 0 });
    expect(again.curves.symphony[12]).toEqual(first.curves.symphony[12]);
  }, 120_000);

  it('draws its figure from the results: our curves with the paper points', () => {
    const spec = figure({ curves: first.curves, symphony: first.keys, setup: { run: tiny } });
    expect(vl.compile(spec as unknown as vl.TopLevelSpec).spec).toBeDefined();
    expect(JSON.stringify(spec)).toContain('paper Symphony');
  });

  it("fits the workload to the papers' statistics", () => {
    const s = paperWorkloadStats(paperSessions(PAPER_WORKLOAD).base);
    expect(s.session_tail[0].generated_share_over).toBeCloseTo(0.1, 2);
    expect(s.session_tail[1].generated_share_over).toBeCloseTo(0.01, 2);
    expect(s.mean_reply_tokens.generated).toBeGreaterThan(300);
    expect(s.mean_reply_tokens.generated).toBeLessThan(380);
    expect(s.mean_typing_lead_s.generated).toBeGreaterThan(10);
    expect(s.mean_typing_lead_s.generated).toBeLessThan(12.5);
    expect(s.multi_turn_share.generated).toBeGreaterThan(0.7);
  });

  it('reruns symphony and recompute with one hardware figure scaled (20% fewer FLOP/s slow recompute’s prefills)', () => {
    const r = symphonyRobustness(ports, { o: tiny, hw, r: { users: 12, factors: [0.8], parameters: ['flops'] } });
    expect(r.rows.map((x) => `${x.parameter}×${x.factor}`)).toEqual(['none×1', 'flops×0.8']);
    // 20% fewer FLOP/s make vLLM-as-paper's prefills, hence its TTFT, slower.
    expect(r.rows[1]!.vllm_paper.ttft_mean_ms!).toBeGreaterThan(r.rows[0]!.vllm_paper.ttft_mean_ms!);
    expect(r.rows[0]!.ttft_vs_vllm).toBeCloseTo(r.rows[0]!.vllm_paper.ttft_mean_ms! / r.rows[0]!.symphony.ttft_mean_ms!, 1);
    expect(typeof r.in_paper_bands_in_every_case).toBe('boolean');
  }, 120_000);
});
