// multiround: TTFT p50 and p99 of each routing policy and Symphony variant, and each one's mean
// active requests per node (load balance).
import { figureSpec, groupedBars } from '@mnemo/testkit';

export function figure(r) {
  const runs = { ...r.policies, ...r.variants };
  const names = Object.keys(runs);
  const ttft = names.flatMap((run) =>
    [
      ['p50', runs[run].ttft_p50_ms],
      ['p99', runs[run].ttft_p99_ms],
    ].map(([q, ms]) => ({ run, q: `TTFT ${q}`, ms })),
  );
  const load = names.flatMap((run) =>
    Object.values(runs[run].mean_active_per_node).map((active, i) => ({ run, node: `node ${i}`, active })),
  );
  return figureSpec(`Multi-round sessions: ${r.workload.sessions} sessions, ${r.workload.requests} requests`, {
    hconcat: [
      groupedBars({
        rows: ttft,
        category: 'run',
        series: 'q',
        value: 'ms',
        valueTitle: 'TTFT (ms, log scale)',
        log: true,
        categoryOrder: names,
        width: 360,
        format: '.0f',
      }),
      groupedBars({
        rows: load,
        category: 'run',
        series: 'node',
        value: 'active',
        valueTitle: 'mean active requests per node',
        categoryOrder: names,
        width: 360,
        label: false,
      }),
    ],
    resolve: { scale: { color: 'independent', xOffset: 'independent' } },
  });
}
