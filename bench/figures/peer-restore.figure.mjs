// peer-restore: turn-2 TTFT p50 on another node — fetched from the peer, recomputed, or on the node that kept it.
import { figureSpec, groupedBars } from '@mnemo/testkit';

export function figure(r) {
  const rows = [
    ['peer (Mnemo)', r.ttft_ms.peer.p50],
    ['recompute', r.ttft_ms.recompute.p50],
    ['stayed', r.ttft_ms.stayed.p50],
  ].map(([run, ms]) => ({ run, ms }));
  return figureSpec(
    `Turn-2 TTFT p50 on another node (${r.model}, ${r.history_tokens}-token history, CPU reference engine)`,
    groupedBars({
      rows,
      category: 'run',
      value: 'ms',
      valueTitle: 'TTFT p50 (ms)',
      categoryOrder: rows.map((x) => x.run),
      width: 300,
      format: '.1f',
    }),
  );
}
