// Symphony's headline ratios against vLLM as the paper ran it (no prefix cache: every turn
// recomputed) again with each hardware figure at −20% and +20% (GPU FLOPs, GPU memory bandwidth,
// PCIe, the network), at one operating point of the sweep. A conclusion that flips under one of
// these hinges on that number. Each run costs minutes, so this covers one user count, not the sweep.
import {
  gpuCluster,
  scaledHardware,
  SYMPHONY_HARDWARE,
  type GpuHardware,
  type GpuHardwareFigure,
} from '../../scenario/gpu-cluster.scenario.js';
import type { Progress } from '../../trace/trace.experiment.js';
import { cycleSessions } from '../shared/paper-workload.js';
import { paperRun, roundFigure as round } from '../shared/paper-run.js';
import { robustnessRows, type RobustnessSweep } from '../shared/robustness.sweep.js';
import type { SymphonyPorts } from './symphony.ports.js';
import { measuredUntilMs, SYMPHONY_RUN, type SymphonySetup } from './symphony.setup.js';

export interface SymphonyRobustnessSweep extends RobustnessSweep<GpuHardwareFigure> {
  readonly users: number;
}

export const SYMPHONY_ROBUSTNESS: SymphonyRobustnessSweep = {
  users: 256,
  factors: [0.8, 1.2],
  parameters: ['flops', 'mem', 'pcie', 'network'],
};

const WHAT: Readonly<Record<GpuHardwareFigure, string>> = {
  flops: 'GPU dense bf16 FLOP/s',
  mem: 'GPU memory bandwidth',
  pcie: 'PCIe bandwidth',
  network: 'network bandwidth between nodes',
};

/** The headline keys each row is held to, as the headline is (at one user count, not the sweep's largest). */
const HEADLINES = ['ttft_vs_vllm', 'tpot_vs_vllm'] as const;

export interface SymphonyRobustnessRow {
  readonly parameter: GpuHardwareFigure | 'none';
  readonly what: string;
  readonly factor: number;
  readonly ttft_vs_vllm: number | null;
  readonly tpot_vs_vllm: number | null;
  readonly symphony: { readonly ttft_mean_ms: number | null; readonly tpot_mean_ms: number | null };
  readonly vllm_paper: { readonly ttft_mean_ms: number | null; readonly tpot_mean_ms: number | null };
}

export interface SymphonyRobustness {
  readonly users: number;
  readonly rows: readonly SymphonyRobustnessRow[];
  readonly ttft_vs_vllm_range: readonly [number, number];
  readonly tpot_vs_vllm_range: readonly [number, number];
  readonly symphony_ahead_in_every_case: boolean;
  readonly in_paper_bands_in_every_case: boolean;
  readonly baseline: string;
}

// Number(): a missing ratio (null) counts as 0 in the ranges and verdicts, as JavaScript's Math.min and `>` read it.
const figure = (x: number | null): number => Number(x);

export function symphonyRobustness(
  ports: SymphonyPorts,
  {
    o = SYMPHONY_RUN,
    r = SYMPHONY_ROBUSTNESS,
    hw: base0 = SYMPHONY_HARDWARE,
    progress = () => {},
  }: { o?: SymphonySetup; r?: SymphonyRobustnessSweep; hw?: GpuHardware; progress?: Progress } = {},
): SymphonyRobustness {
  const sessions = () => cycleSessions(ports.base(o.thinkCompression, o.seed), r.users * 40, ports.systemTokens);
  const rows = robustnessRows(r, progress, '', (c, tick): SymphonyRobustnessRow => {
    const hw = c.parameter === 'none' ? base0 : scaledHardware(base0, { [c.parameter]: c.factor });
    const run = (system: string, paperBaseline = false) => {
      tick(system);
      const config = gpuCluster(hw, system, { users: r.users, rampMs: o.rampMs, seed: o.seed, tenant: `rob-${system}`, paperBaseline });
      return paperRun(config, sessions(), { warmMs: o.warmMs, untilMs: measuredUntilMs(o, r.users) });
    };
    const sym = run('symphony');
    const rec = run('recompute', true);
    return {
      parameter: c.parameter,
      what: c.parameter === 'none' ? 'the tables as they are' : WHAT[c.parameter],
      factor: c.factor,
      ttft_vs_vllm: round(figure(rec.ttft_mean_ms) / figure(sym.ttft_mean_ms)),
      tpot_vs_vllm: round(figure(rec.tpot_mean_ms) / figure(sym.tpot_mean_ms)),
      symphony: { ttft_mean_ms: sym.ttft_mean_ms, tpot_mean_ms: sym.tpot_mean_ms },
      vllm_paper: { ttft_mean_ms: rec.ttft_mean_ms, tpot_mean_ms: rec.tpot_mean_ms },
    };
  });
  const range = (k: (typeof HEADLINES)[number]): [number, number] => [
    Math.min(...rows.map((x) => figure(x[k]))),
    Math.max(...rows.map((x) => figure(x[k]))),
  ];
  return {
    users: r.users,
    rows,
    ttft_vs_vllm_range: range('ttft_vs_vllm'),
    tpot_vs_vllm_range: range('tpot_vs_vllm'),
    symphony_ahead_in_every_case: rows.every((x) => figure(x.ttft_vs_vllm) > 1 && figure(x.tpot_vs_vllm) > 1),
    in_paper_bands_in_every_case: rows.every((x) =>
      HEADLINES.every((k) => {
        const v = x[k];
        return v !== null && ports.holds(`symphony.${k}`, v);
      }),
    ),
    baseline: 'vllm-paper (no prefix cache)',
  };
}
