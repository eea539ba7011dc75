// The figure of `npm run twin -- trace` (twin-trace-<name>): a request trace replayed through the twin's prefill pool:
// mean TTFT per policy at the run's node count with Mooncake's Fig. 5 bars beside ours, the hit rate
// against cache capacity over its maximum (Fig. 9) with the paper's two statements as rings, and
// Fig. 10's global ÷ local ratios beside the paper's. Paper figures come from the results file.
import { figureSpec, groupedBars, lineLayer, PALETTE, paperRings } from '@mnemo/testkit';

const ORDER = ['random', 'least-loaded', 'local', 'conductor', 'llmd', 'symphony'];
// Fig. 5's bars for the policies it has (s), by our names: load balancing is least-loaded, global cache-aware is conductor.
const FIG5_S = { random: 19.65, 'least-loaded': 5.27, local: 3.58, conductor: 3.07 };

function ttft(r) {
  const known = r.paper_check.fig5_random_over_local.paper !== null;
  const rows = ORDER.filter((p) => r.policies[p]).flatMap((p) => [
    { policy: p, source: 'twin', value: r.policies[p].ttft_mean_ms / 1000 },
    ...(known && FIG5_S[p] ? [{ policy: p, source: 'paper (Fig. 5)', value: FIG5_S[p] }] : []),
  ]);
  return groupedBars({
    rows,
    category: 'policy',
    series: 'source',
    value: 'value',
    valueTitle: `mean TTFT (s), ${r.setup.nodes} nodes`,
    categoryOrder: ORDER,
    seriesOrder: ['twin', 'paper (Fig. 5)'],
    log: true,
    width: 300,
  });
}

function capacity(r) {
  const x = { field: 'capacity_tokens', type: 'quantitative', scale: { type: 'log' }, title: 'cache capacity (tokens)' };
  const y = { field: 'over_max', type: 'quantitative', title: 'hit rate ÷ maximum', scale: { domain: [0, 1.05] } };
  const paper = [
    { capacity_tokens: 3e6, over_max: 0.5, label: 'paper: 3M under half' },
    { capacity_tokens: 5e7, over_max: 0.9, label: 'paper: 50M nearly all' },
  ];
  return {
    width: 280,
    height: 220,
    layer: [lineLayer(r.fig9.curve, { x, y }, { color: PALETTE[0] }), ...paperRings(paper, x, y, { align: 'right', dx: -8, dy: -8 })],
  };
}

function fig10(r) {
  const c = r.paper_check;
  const rows = [
    ['hit rate', c.fig10_global_over_local_hit],
    ['prefill GPU time', c.fig10_global_over_local_prefill],
  ].flatMap(([what, v]) => [
    { what, source: 'twin', value: v.twin ?? 0 },
    ...(v.paper !== null ? [{ what, source: 'paper (Fig. 10)', value: v.paper }] : []),
  ]);
  return groupedBars({
    rows,
    category: 'what',
    series: 'source',
    value: 'value',
    valueTitle: `global ÷ local, ${r.fig10.nodes} nodes`,
    seriesOrder: ['twin', 'paper (Fig. 10)'],
    rule: 1,
    width: 160,
  });
}

export function figure(r) {
  return figureSpec(`Trace replay on the twin: ${r.trace.requests} requests, LLaMA3-70B on modelled 8 × A800 instances`, {
    hconcat: [ttft(r), capacity(r), fig10(r)],
    resolve: { scale: { color: 'independent' } },
  });
}
