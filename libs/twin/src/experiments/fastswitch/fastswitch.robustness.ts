// FastSwitch's headline ratios again with each hardware figure at −20% and +20%: the A10's dense
// FLOP/s, its memory bandwidth, its KV capacity (its memory), the PCIe bandwidth and the per-call
// dispatch, at the paper's dispatch (§2.2's lowest, 90 µs) under the Markov trace at f = 0.04. A conclusion that held only
// at the tables' exact values shows here as a ratio under its target. Each row runs the first
// `conversations` of the workload (a few seconds each on this machine), not all 1,000.
import type { Progress } from '../../trace/trace.experiment.js';
import { robustnessRows, type RobustnessSweep } from '../shared/robustness.sweep.js';
import { fastswitchPaperDispatchMs } from './fastswitch.checks.js';
import { fastswitchRatios, fastswitchRunOnce, type FastswitchRatios } from './fastswitch.run.js';
import {
  FASTSWITCH_SETUP,
  fastswitchConversations,
  fastswitchInBands,
  round,
  type FastswitchPorts,
  type FastswitchSetup,
  type FastswitchSystem,
  type HardwareScale,
} from './fastswitch.setup.js';

type ScaledFigure = keyof HardwareScale;

export interface FastswitchRobustnessSweep extends RobustnessSweep<ScaledFigure> {
  /** The first this many conversations of the workload run in each row. */
  readonly conversations: number;
}

export const FASTSWITCH_ROBUSTNESS: FastswitchRobustnessSweep = {
  conversations: 200,
  factors: [0.8, 1.2],
  parameters: ['flops', 'mem', 'capacity', 'pcie', 'dispatch'],
};

const WHAT: Record<ScaledFigure, string> = {
  flops: 'GPU dense bf16 FLOP/s',
  mem: 'GPU memory bandwidth',
  capacity: 'device KV blocks (GPU memory)',
  pcie: 'PCIe bandwidth',
  dispatch: 'per-call copy dispatch',
};

export interface FastswitchRobustnessRow extends FastswitchRatios {
  readonly parameter: ScaledFigure | 'none';
  readonly what: string;
  readonly factor: number;
  readonly vllm_p99_ttft_ms: number;
  readonly fastswitch_p99_ttft_ms: number;
}

export function fastswitchRobustness(
  ports: FastswitchPorts,
  {
    s = FASTSWITCH_SETUP,
    r = FASTSWITCH_ROBUSTNESS,
    progress = () => {},
  }: { s?: FastswitchSetup; r?: FastswitchRobustnessSweep; progress?: Progress } = {},
) {
  const convs = fastswitchConversations(ports.draw, s).slice(0, r.conversations);
  const rows = robustnessRows(r, progress, 'robustness ', (c, tick): FastswitchRobustnessRow => {
    const scale: HardwareScale = c.parameter === 'none' ? {} : { [c.parameter]: c.factor };
    const run = (system: FastswitchSystem) => {
      tick(system);
      const [pattern, frequency] = [s.patterns[0], s.frequencies[0]];
      return fastswitchRunOnce({ system, dispatchMs: fastswitchPaperDispatchMs(), pattern, frequency, s, convs, scale });
    };
    const vllm = run('vllm');
    const fastswitch = run('fastswitch');
    return {
      parameter: c.parameter,
      what: c.parameter === 'none' ? 'the tables as they are' : WHAT[c.parameter],
      factor: c.factor,
      ...fastswitchRatios(vllm, fastswitch),
      vllm_p99_ttft_ms: vllm.p99_ttft_ms,
      fastswitch_p99_ttft_ms: fastswitch.p99_ttft_ms,
    };
  });
  const range = (k: keyof FastswitchRatios): [number, number] => [
    round(Math.min(...rows.map((x) => x[k]))),
    round(Math.max(...rows.map((x) => x[k]))),
  ];
  return {
    conversations: convs.length,
    rows,
    p99_ttft_ratio_range: range('p99_ttft_ratio'),
    p999_tbt_ratio_range: range('p999_tbt_ratio'),
    swap_out_reduction_range: range('swap_out_reduction'),
    switch_overhead_ratio_range: range('switch_overhead_ratio'),
    targets_met_in_every_case: rows.every((x) => fastswitchInBands(x, ports.holds)),
  };
}
export type FastswitchRobustness = ReturnType<typeof fastswitchRobustness>;
