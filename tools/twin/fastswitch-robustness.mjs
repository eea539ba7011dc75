// FastSwitch's headline ratios again with each hardware figure at −20% and +20%: the A10's dense
// FLOP/s, its memory bandwidth, its KV capacity (its memory), the PCIe bandwidth and the per-call
// dispatch, at the paper's dispatch (§2.2's lowest, 90 µs) under the Markov trace at f = 0.04. A conclusion that held only
// at the tables' exact values shows here as a ratio under its target. Each row runs the first
// `conversations` of the workload (a few seconds each on this machine), not all 1,000.
import { FASTSWITCH_SETUP, fastswitchConversations, inBands, paperDispatchMs, ratios, round, runOnce } from './fastswitch.mjs';
import { robustnessRows } from './robustness.sweep.mjs';

export const ROBUSTNESS = { conversations: 200, factors: [0.8, 1.2], parameters: ['flops', 'mem', 'capacity', 'pcie', 'dispatch'] };

const WHAT = {
  flops: 'GPU dense bf16 FLOP/s',
  mem: 'GPU memory bandwidth',
  capacity: 'device KV blocks (GPU memory)',
  pcie: 'PCIe bandwidth',
  dispatch: 'per-call copy dispatch',
};

export function fastswitchRobustness({ s = FASTSWITCH_SETUP, r = ROBUSTNESS, progress = () => {} } = {}) {
  const convs = fastswitchConversations(s).slice(0, r.conversations);
  const rows = robustnessRows(r, progress, 'robustness ', (c, tick) => {
    const scale = c.parameter === 'none' ? {} : { [c.parameter]: c.factor };
    const run = (system) => {
      tick(system);
      return runOnce({ system, dispatchMs: paperDispatchMs(), pattern: s.patterns[0], frequency: s.frequencies[0], s, convs, scale });
    };
    const vllm = run('vllm');
    const fastswitch = run('fastswitch');
    return {
      parameter: c.parameter,
      what: WHAT[c.parameter] ?? 'the tables as they are',
      factor: c.factor,
      ...ratios(vllm, fastswitch),
      vllm_p99_ttft_ms: vllm.p99_ttft_ms,
      fastswitch_p99_ttft_ms: fastswitch.p99_ttft_ms,
    };
  });
  const range = (k) => [Math.min(...rows.map((x) => x[k])), Math.max(...rows.map((x) => x[k]))].map((v) => round(v));
  return {
    conversations: convs.length,
    rows,
    p99_ttft_ratio_range: range('p99_ttft_ratio'),
    p999_tbt_ratio_range: range('p999_tbt_ratio'),
    swap_out_reduction_range: range('swap_out_reduction'),
    switch_overhead_ratio_range: range('switch_overhead_ratio'),
    targets_met_in_every_case: rows.every(inBands),
  };
}
