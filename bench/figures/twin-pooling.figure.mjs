// twin-pooling: TTFT and blocked I/O against context length for each configuration on the twin
// (log–log; a zero has no point), the paper's published LLaMA-3.1-8B points at 128K drawn over them as rings (§V-B text:
// pooling's 5.6 s and 0.6 s and each baseline's ratio to it), and the 128K ablation beside the
// paper's ratios (§V-C).
import { contextAxis, figureSpec, groupedBars, lineLayer, PALETTE, paperRings } from '@mnemo/testkit';

const CONFIGS = ['lmcache', 'lmcache-lp', 'lmcache-lp-async', 'pool', 'orchestrator-only', 'passthrough-only'];

function lines(r, metric, paperKey, title) {
  const rows = CONFIGS.flatMap((config) =>
    Object.entries(r.curves[config] ?? {})
      .filter(([, t]) => t[metric] > 0)
      .map(([tokens, t]) => ({ config, tokens: Number(tokens), value: t[metric] / 1000 })),
  );
  const top = r.setup.contexts[r.setup.contexts.length - 1];
  const paper = Object.entries(r.paper[paperKey]).map(([config, value]) => ({ tokens: top, value, label: `paper ${config}` }));
  const x = contextAxis(r.setup.contexts);
  const y = { field: 'value', type: 'quantitative', scale: { type: 'log' }, title };
  return {
    width: 320,
    height: 240,
    layer: [
      lineLayer(rows, { x, y, color: { field: 'config', type: 'nominal', title: null, sort: CONFIGS, scale: { range: PALETTE } } }),
      ...paperRings(paper, x, y, { align: 'right', dx: -10 }),
    ],
  };
}

export function figure(r) {
  const ablation = Object.entries(r.pooling.ablation_128k_ttft_vs_full).flatMap(([config, value]) => [
    { config, source: 'twin', value },
    { config, source: 'paper §V-C', value: r.paper.ablation_128k[config] },
  ]);
  return figureSpec(
    `Unified KV pooling on the twin: one Long Doc QA request at a time, ${r.setup.model} on a modelled ${r.setup.gpu} (rings: the paper's points)`,
    {
      hconcat: [
        lines(r, 'ttft_ms', 'ttft_128k_s', 'TTFT (s)'),
        lines(r, 'blocked_io_ms', 'blocked_128k_s', 'blocked I/O (s)'),
        groupedBars({
          rows: ablation,
          category: 'config',
          series: 'source',
          value: 'value',
          valueTitle: 'TTFT at 128K ÷ full pool',
          width: 160,
          rule: 1,
        }),
      ],
      resolve: { scale: { color: 'independent' } },
    },
  );
}
