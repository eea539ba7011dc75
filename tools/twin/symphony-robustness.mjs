// `npm run twin -- symphony-robustness`: Symphony's headline ratios against vLLM as the paper ran it
// (no prefix cache: every turn recomputed) again with each hardware figure at −20% and +20% (GPU FLOPs, GPU memory bandwidth, PCIe, the
// network), at one operating point of the sweep. A conclusion that flips under one of these
// hinges on that number. Each run costs minutes here, so this covers one user count, not the sweep.
import { gpuCluster, scaledHardware, SYMPHONY_HARDWARE } from './gpu-cluster.mjs';
import { paperRun, round } from './paper-run.mjs';
import { PAPER_WORKLOAD, paperSessions } from './paper-workload.mjs';
import { robustnessRows } from './robustness.sweep.mjs';
import { SYMPHONY_RUN } from './symphony.mjs';
import { holds, targetOf } from '@mnemo/testkit';

// The headline keys' paper bands: each row is held to them as the headline is (at one user count, not the sweep's largest).
const BANDS = {
  ttft_vs_vllm: targetOf('twin-symphony', 'symphony.ttft_vs_vllm'),
  tpot_vs_vllm: targetOf('twin-symphony', 'symphony.tpot_vs_vllm'),
};

export const ROBUSTNESS = { users: 256, factors: [0.8, 1.2], parameters: ['flops', 'mem', 'pcie', 'network'] };

const WHAT = {
  flops: 'GPU dense bf16 FLOP/s',
  mem: 'GPU memory bandwidth',
  pcie: 'PCIe bandwidth',
  network: 'network bandwidth between nodes',
};

export function symphonyRobustness({ o = SYMPHONY_RUN, r = ROBUSTNESS, hw: base0 = SYMPHONY_HARDWARE, progress = () => {} } = {}) {
  const wl = { ...PAPER_WORKLOAD, thinkCompression: o.thinkCompression };
  const { base } = paperSessions(wl, 0);
  const rows = robustnessRows(r, progress, '', (c, tick) => {
    const hw = c.parameter === 'none' ? base0 : scaledHardware(base0, { [c.parameter]: c.factor });
    const run = (system, paperBaseline = false) => {
      tick(system);
      const config = gpuCluster(hw, system, { users: r.users, rampMs: o.rampMs, seed: o.seed, tenant: `rob-${system}`, paperBaseline });
      return paperRun(config, paperSessions(wl, r.users * 40, base).sessions, { warmMs: o.warmMs, untilMs: o.untilMs });
    };
    const sym = run('symphony');
    const rec = run('recompute', true);
    return {
      parameter: c.parameter,
      what: WHAT[c.parameter] ?? 'the tables as they are',
      factor: c.factor,
      ttft_vs_vllm: round(rec.ttft_mean_ms / sym.ttft_mean_ms),
      tpot_vs_vllm: round(rec.tpot_mean_ms / sym.tpot_mean_ms),
      symphony: { ttft_mean_ms: sym.ttft_mean_ms, tpot_mean_ms: sym.tpot_mean_ms },
      vllm_paper: { ttft_mean_ms: rec.ttft_mean_ms, tpot_mean_ms: rec.tpot_mean_ms },
    };
  });
  const range = (k) => [Math.min(...rows.map((x) => x[k])), Math.max(...rows.map((x) => x[k]))];
  return {
    users: r.users,
    rows,
    ttft_vs_vllm_range: range('ttft_vs_vllm'),
    tpot_vs_vllm_range: range('tpot_vs_vllm'),
    symphony_ahead_in_every_case: rows.every((x) => x.ttft_vs_vllm > 1 && x.tpot_vs_vllm > 1),
    in_paper_bands_in_every_case: rows.every((x) => Object.entries(BANDS).every(([k, t]) => holds(x[k], t))),
    baseline: 'vllm-paper (no prefix cache)',
  };
}
