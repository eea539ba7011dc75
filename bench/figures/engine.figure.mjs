// engine: prefill and batched-decode tokens/s per model and backend, on log axes.
import { figureSpec, groupedBars } from '@mnemo/testkit';

export function figure(r) {
  const rows = ['cpu', 'cuda'].flatMap((backend) =>
    (r[backend] ?? []).map((x) => ({ backend, model: x.model.replace('mnemo-', ''), prefill: x.prefill_tok_s, decode: x.decode_tok_s })),
  );
  const panel = (value, valueTitle) =>
    groupedBars({ rows, category: 'model', series: 'backend', value, valueTitle, log: true, width: 280, format: ',.0f' });
  return figureSpec('Engine throughput by model and backend (log scale)', {
    hconcat: [panel('prefill', 'prefill tokens/s'), panel('decode', 'decode tokens/s (batched)')],
  });
}
