// The plan as an operator reads it on the terminal: one row per policy.
import type { PlanResult } from './plan.experiment.js';

const HEAD = [
  'policy',
  'instances',
  'nodes',
  'host GB/node',
  'SSD TB/node',
  '$/hour',
  'P99 TTFT ms',
  'mean TPOT ms',
  'cell estimate',
  'floor ms',
  'runs',
];

/** The verified answer beside the cells' estimate, and why each policy without one cannot meet. */
export function planTable(result: Pick<PlanResult, 'plans'>): string {
  const plans = Object.entries(result.plans);
  const rows = plans.map(([policy, p]) => {
    const b = p.best;
    const e = p.slice_estimate;
    const runs = `${p.tried.filter((t) => t.ran && !t.reused).length} + ${p.verification?.runs?.length ?? 0} whole`;
    const est = e ? `${e.instances} (${e.ttft_p99_ms} ms)` : 'none';
    const floor = String(p.ttft_floor_ms ?? '');
    return (
      b
        ? [
            policy,
            b.instances,
            b.nodes,
            b.host_gb,
            b.ssd_tb,
            b.cost_usd_per_hour.toFixed(2),
            b.ttft_p99_ms,
            b.tpot_mean_ms,
            est,
            floor,
            runs,
          ]
        : [policy, 'cannot meet', '', '', '', '', '', '', est, floor, runs]
    ).map(String);
  });
  const width = HEAD.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r: readonly string[]) => r.map((c, i) => (i ? c.padStart(width[i]) : c.padEnd(width[i]))).join('  ');
  const notes = plans.filter(([, p]) => !p.best).map(([policy, p]) => `${policy}: ${p.reason}`);
  return [line(HEAD), ...rows.map(line), ...notes].join('\n');
}
