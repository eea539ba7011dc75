import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_WORKLOAD, holds, loadFigure, targetOf, workload } from '@mnemo/testkit';
import {
  FASTSWITCH_SETUP,
  fastswitchConversations as conversations,
  fastswitchExperiment,
  fastswitchRobustness,
  fastswitchRunOnce as runOnce,
  fastswitchWorkload,
  type FastswitchPorts,
  type FastswitchSetup,
} from '@mnemo/twin';
import * as vl from 'vega-lite';

// A small configuration (seconds): 40 conversations drawn, the first 24 served, at twice the rate on a quarter of the KV
// so that they contend
// (conversations cut at 4,096 tokens, so one request always fits that KV alone); two dispatch points.
const small: FastswitchSetup = {
  ...FASTSWITCH_SETUP,
  conversations: 40,
  runConversations: 24,
  requestsPerS: 2,
  kvScale: 0.25,
  contextTokens: 4096,
  dispatchMs: [0.00247, 0.09],
  frequencies: [0.04],
  curveSeeds: 2,
};

// The experiment lives in libs/twin (experiments/fastswitch); it runs here, as `npm run twin -- fastswitch` runs it, on
// FastSwitch's workload drawn by testkit's generator and judged against the targets registered in testkit.
const FASTSWITCH_WORKLOAD = fastswitchWorkload(DEFAULT_WORKLOAD);
const ports: FastswitchPorts = {
  draw: (sessions, seed) => workload({ ...FASTSWITCH_WORKLOAD, sessions, seed }),
  holds: (path, value) => holds(value, targetOf('twin-fastswitch', path)),
};
const fastswitchConversations = (s: FastswitchSetup) => conversations(ports.draw, s);

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const figure = await loadFigure(root, 'twin-fastswitch');

describe('FastSwitch on the twin', () => {
  const run = fastswitchExperiment(ports, { s: small });

  it("writes the four headline keys at the paper's dispatch, a curve over the dispatch, the other trace, the ablation and the load", () => {
    for (const k of ['p99_ttft_ratio', 'p999_tbt_ratio', 'swap_out_reduction', 'switch_overhead_ratio'] as const)
      expect(typeof run.fastswitch[k]).toBe('number');
    expect(run.curve.map((p) => p.dispatch_us)).toEqual([2.5, 90]);
    expect(run.fastswitch.dispatch_us).toBe(90);
    // Ours: the measured dispatch, reported beside the paper's regime.
    expect(run.fastswitch.measured_dispatch.p99_ttft_ratio).toBe(run.curve[0]!.p99_ttft_ratio);
    // Every published baseline figure carries the paper's value, the twin's and the error between them.
    for (const c of Object.values(run.baseline_check)) {
      expect(typeof c.paper).toBe('number');
      if (c.twin !== null) expect(c.error).toBeCloseTo(c.twin / c.paper - 1, 2);
    }
    expect(run.baseline_check.s22_dispatch_share_of_128kb_copy.twin).toBeGreaterThan(0.9);
    // Fig. 10 is the paper's own groups, on vLLM's per-layer layout: a copy per run, layer and K/V.
    const paperGroups = run.ablation['groups-only-vllm-layout'];
    expect(run.baseline_check.fig10_groups_switch_overhead.twin).toBe(paperGroups.switch_overhead_ratio);
    expect(paperGroups.swap_out_calls % (2 * 32)).toBe(0);
    expect(paperGroups.swap_out_calls).toBeLessThan(paperGroups.swap_out_blocks * 2 * 32);
    expect(run.curve[1]!.p99_ttft_ratio).toBe(run.fastswitch.p99_ttft_ratio);
    // Each point is the median over the seeds (two here: their mean).
    const seeds = run.curve[1]!.by_seed;
    expect(seeds.map((r) => r.seed)).toEqual([small.seed, small.seed + 1]);
    expect(run.curve[1]!.p999_tbt_ratio).toBeCloseTo((seeds[0]!.p999_tbt_ratio + seeds[1]!.p999_tbt_ratio) / 2, 2);
    expect(run.by_trace.map((t) => t.pattern)).toEqual(['random']);
    expect(Object.keys(run.ablation).sort()).toEqual(['async-only', 'groups-only', 'groups-only-vllm-layout', 'reuse-only']);
    expect(run.load.requests_per_s).toBe(2 * small.requestsPerS);
  });

  it("runs §4's prefill with prefix beside the headline: returning turns start from their host copy and compute less", () => {
    const { paper_dispatch: p, measured_dispatch: m } = run.prefix_kept;
    expect([p.dispatch_us, m.dispatch_us]).toEqual([90, 2.5]);
    for (const r of [p.vllm, p.fastswitch, m.vllm, m.fastswitch]) expect(r.prefix_restores).toBeGreaterThan(0);
    // The headline runs compute every turn's whole history: none start from a copy.
    expect(run.curve[1]!.vllm.prefix_restores).toBe(0);
    expect(p.fastswitch.reused_blocks).toBeGreaterThan(0);
    expect(p.vllm.reused_blocks).toBe(0);
  });

  it('swaps: vLLM cuts every block into layers × 2 copies, FastSwitch copies group runs and reuses host copies', () => {
    const v = run.curve[1]!.vllm;
    const f = run.curve[1]!.fastswitch;
    expect(v.swap_outs).toBeGreaterThan(0);
    expect(v.swap_out_calls).toBe(v.swap_out_blocks * 64);
    expect(v.reused_blocks).toBe(0);
    expect(f.swap_out_calls).toBeLessThan(f.swap_out_blocks);
    expect(f.blocks_per_call).toBeGreaterThan(1);
    expect(run.ablation['reuse-only']!.reused_blocks).toBeGreaterThan(0);
  });

  it("reads Table 1 inside FastSwitch's own run: its swap-outs against the same ones copying every block", () => {
    const f = run.curve[1]!.fastswitch;
    expect(f.traditional_swap_out.blocks).toBe(f.swap_out_blocks + f.reused_blocks);
    expect(f.traditional_swap_out.calls).toBeGreaterThanOrEqual(f.swap_out_calls);
    // Each seed's ratios are its own FastSwitch run's; the check reads their median (two seeds here: their mean).
    const seeds = run.curve[1]!.by_seed;
    expect(seeds[0]!.table1).toEqual({
      blocks: +(f.swap_out_blocks / f.traditional_swap_out.blocks).toFixed(4),
      operations: +(f.swap_out_calls / f.traditional_swap_out.calls).toFixed(4),
      latency: expect.closeTo(f.swap_out_s / f.traditional_swap_out.s, 2),
    });
    const mean = (k: 'blocks' | 'operations' | 'latency') => (seeds[0]!.table1[k] + seeds[1]!.table1[k]) / 2;
    expect(run.baseline_check.table1_blocks_reuse_over_traditional.twin).toBeCloseTo(mean('blocks'), 3);
    expect(run.baseline_check.table1_operations_reuse_over_traditional.twin).toBeCloseTo(mean('operations'), 3);
    expect(run.baseline_check.table1_latency_reuse_over_traditional.twin).toBeCloseTo(mean('latency'), 3);
    // The headline's cut is the same figure as the check's blocks ratio.
    expect(run.fastswitch.swap_out_reduction).toBeCloseTo(1 - run.baseline_check.table1_blocks_reuse_over_traditional.twin!, 2);
    // Without reuse the two columns are the same swap-outs.
    const v = run.curve[1]!.vllm;
    expect(v.traditional_swap_out).toEqual({ blocks: v.swap_out_blocks, calls: v.swap_out_calls, s: v.swap_out_s });
  });

  it("costs vLLM more switching time the dearer a call's dispatch, and is the same on every run", () => {
    expect(run.curve[1]!.vllm.switch_stall_s).toBeGreaterThan(run.curve[0]!.vllm.switch_stall_s);
    const convs = fastswitchConversations(small);
    const again = runOnce({ system: 'vllm', dispatchMs: 0.09, pattern: 'markov', frequency: 0.04, s: small, convs });
    expect(again).toEqual(run.curve[1]!.vllm);
  });

  it('draws conversations at the requested rate, each within the context', () => {
    const convs = fastswitchConversations({ ...small, runConversations: 40 });
    for (const c of convs) {
      let history = 0;
      for (const t of c.turns) {
        history += t.userTokens + t.replyTokens;
        expect(history).toBeLessThanOrEqual(small.contextTokens);
      }
    }
    const requests = convs.reduce((a, c) => a + c.turns.length, 0);
    expect(requests / (convs.at(-1)!.arrivalMs / 1000)).toBeGreaterThan(small.requestsPerS / 2);
    expect(requests / (convs.at(-1)!.arrivalMs / 1000)).toBeLessThan(small.requestsPerS * 2);
  });

  it('compiles to a Vega-Lite spec with the paper points', () => {
    const spec = figure(run);
    expect(() => vl.compile(spec as never)).not.toThrow();
    expect(JSON.stringify(spec)).toContain('paper 3.11');
  });

  it('reruns the headline keys with each hardware figure at ±20%', () => {
    const r = fastswitchRobustness(ports, { s: small, r: { conversations: 12, factors: [0.8, 1.2], parameters: ['pcie', 'dispatch'] } });
    expect(r.rows.map((x) => `${x.parameter}@${x.factor}`)).toEqual(['none@1', 'pcie@0.8', 'pcie@1.2', 'dispatch@0.8', 'dispatch@1.2']);
    expect(typeof r.targets_met_in_every_case).toBe('boolean');
  });
});
