// twin-symphony: mean TPOT and mean TTFT against users for each serving system on the twin, the
// paper's published points (Fig. 11 caption: vLLM 18.5 ms at 64 users, Symphony 20.5 ms at 256)
// drawn over them as black rings, and each system's instance-load imbalance at 256 users beside
// the paper's InferCept 3.1× (Fig. 15).
import { figureSpec, groupedBars, lineLayer, PALETTE, paperRings } from '@mnemo/testkit';

// vllm-paper: vLLM as the paper ran it (no prefix cache); recompute: vLLM at its best (its prefix cache on).
const SYSTEMS = ['symphony', 'vllm-paper', 'recompute', 'infercept', 'llmd'];

function lines(r, metric, title, paper) {
  const rows = SYSTEMS.flatMap((system) =>
    Object.entries(r.curves[system] ?? {}).map(([users, s]) => ({ system, users: Number(users), value: s[metric] })),
  );
  const x = {
    field: 'users',
    type: 'quantitative',
    scale: { type: 'log', base: 2 },
    title: 'concurrent users',
    axis: { values: r.setup.run.users },
  };
  return {
    width: 300,
    height: 220,
    layer: [
      lineLayer(rows, {
        x,
        y: { field: 'value', type: 'quantitative', title },
        color: { field: 'system', type: 'nominal', title: null, sort: SYSTEMS, scale: { range: PALETTE } },
      }),
      ...(paper.length ? paperRings(paper, x, { field: 'value', type: 'quantitative' }, { align: 'left', dx: 8, dy: -6 }) : []),
    ],
  };
}

export function figure(r) {
  // Fig. 15's metric: users held per instance (distinct sessions each served in the measured window), max ÷ median.
  const imbalance = SYSTEMS.filter((system) => r.curves[system]?.[r.setup.run.imbalanceUsers]).map((system) => ({
    system,
    value: r.curves[system][r.setup.run.imbalanceUsers].imbalance_users_max_over_median ?? 0,
  }));
  return figureSpec(`Symphony on the twin: 8 × Llama-3.1-8B on modelled A100s (rings: the paper's published points)`, {
    hconcat: [
      lines(r, 'tpot_mean_ms', 'mean TPOT (ms)', [
        { users: 64, value: 18.5, label: 'paper vLLM' },
        { users: 256, value: 20.5, label: 'paper Symphony' },
      ]),
      lines(r, 'ttft_mean_ms', 'mean TTFT (ms)', []),
      groupedBars({
        rows: [...imbalance, { system: 'paper InferCept', value: 3.1 }],
        category: 'system',
        value: 'value',
        valueTitle: `users held per instance, max ÷ median, ${r.setup.run.imbalanceUsers} users`,
        categoryOrder: [...SYSTEMS, 'paper InferCept'],
        width: 200,
        rule: 1,
      }),
    ],
    resolve: { scale: { color: 'independent' } },
  });
}
