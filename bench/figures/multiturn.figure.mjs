// multiturn: TTFT CDF of every configuration over the same multi-turn conversations.
import { cdf, figureSpec } from '@mnemo/testkit';

export function figure(r) {
  const at = r.requests_columns.indexOf('ttft_ms');
  const runs = Object.fromEntries(Object.entries(r.requests).map(([name, rows]) => [name, rows.map((x) => x[at])]));
  return figureSpec(`Multi-turn chat: TTFT per request (${r.model})`, cdf(runs, { title: 'TTFT (ms, log scale)' }));
}
