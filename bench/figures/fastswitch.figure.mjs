// fastswitch: per trace pattern and priority-change frequency, baseline ÷ FastSwitch for P99 TTFT
// and P99.9 TBT, and the share of swap-out volume saved; the 1× line marks parity.
import { figureSpec, groupedBars } from '@mnemo/testkit';

const METRICS = [
  ['p99_ttft_baseline_over_fastswitch', 'P99 TTFT ratio'],
  ['p999_tbt_baseline_over_fastswitch', 'P99.9 TBT ratio'],
  ['swap_out_volume_reduction', 'swap-out volume cut'],
];

export function figure(r) {
  const rows = r.rows.flatMap((x) => METRICS.map(([k, metric]) => ({ trace: `${x.pattern} ${x.freq}`, metric, value: x[k] ?? 0 })));
  return figureSpec(
    `FastSwitch vs vLLM-style swap — ${r.engine}`,
    groupedBars({
      rows,
      category: 'trace',
      series: 'metric',
      value: 'value',
      valueTitle: 'baseline ÷ FastSwitch (volume cut: fraction)',
      seriesOrder: METRICS.map(([, m]) => m),
      categoryOrder: [...new Set(rows.map((x) => x.trace))],
      rule: 1,
      width: 520,
    }),
  );
}
