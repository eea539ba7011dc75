// multiround-engine: TTFT p50 and p99 per router on the reference engine (fortune-base), each pass a bar.
import { figureSpec, groupedBars } from '@mnemo/testkit';

export function figure(r) {
  const systems = Object.keys(r.cluster.systems);
  const rows = r.passes.flatMap((p, i) =>
    systems
      .filter((s) => p[s])
      .flatMap((s) => [
        { run: s, series: `p50, pass ${i + 1}`, ms: p[s].ttft_p50_ms },
        { run: s, series: `p99, pass ${i + 1}`, ms: p[s].ttft_p99_ms },
      ]),
  );
  return figureSpec(
    `Multi-round TTFT on the reference engine (${r.model}; ${r.cluster.nodes} nodes, ${r.env.users} users)`,
    groupedBars({
      rows,
      category: 'run',
      series: 'series',
      value: 'ms',
      valueTitle: 'TTFT (ms)',
      categoryOrder: systems,
      log: true,
      format: '.0f',
    }),
  );
}
