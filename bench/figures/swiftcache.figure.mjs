// swiftcache: the longest context the serving path completes, the master's multi-turn TTFT p99,
// and the workers' TPOT p99, each against its baseline.
import { figureSpec, groupedBars } from '@mnemo/testkit';

export function figure(r) {
  const panel = (title, items) => {
    const rows = items.map(([run, value]) => ({ run, value }));
    return groupedBars({ rows, category: 'run', value: 'value', valueTitle: title, categoryOrder: items.map(([run]) => run), width: 200 });
  };
  return figureSpec(
    [
      'SwiftCache',
      `max_context_ratio ${r.max_context_ratio} · master_ttft_p99_offload_over_swiftcache ${r.master_ttft_p99_offload_over_swiftcache} · worker_interference ${r.worker_interference}`,
    ],
    {
      hconcat: [
        panel('max context, serving path (tokens)', [
          ['stream off', r.max_context.stream_off.tokens],
          ['chunked prefill', r.max_context.chunked_prefill.tokens],
          ['layer stream', r.max_context.stream_on.tokens],
        ]),
        panel('master multi-turn TTFT p99 (ms)', [
          ['host offload', r.master_multiturn.offload.ttft_p99_ms],
          ['SwiftCache', r.master_multiturn.swiftcache.ttft_p99_ms],
        ]),
        panel('worker TPOT p99 (ms)', [
          ['alone', r.workers.tpot_alone_p99_ms],
          ['master on host', r.workers.tpot_p99_ms_master_on_host],
          ['master on lent', r.workers.tpot_p99_ms_master_on_lent],
        ]),
      ],
    },
  );
}
