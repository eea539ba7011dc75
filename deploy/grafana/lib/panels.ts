// Grafana panel builders: each returns plain dashboard JSON (schemaVersion 39, Grafana 10.x and
// later) for one panel, its queries on the dashboard's Prometheus datasource variable. Layout is
// left to `layout`: panels flow left to right in a 24-column grid, rows start a new line.

/** The datasource every query uses: the dashboard variable, chosen on import. */
export const DATASOURCE = { type: 'prometheus', uid: '${datasource}' };

/** Rate window: Grafana's, at least four scrape intervals. */
export const RATE = '$__rate_interval';

/** A query: PromQL and its legendFormat. */
export interface Query {
  readonly expr: string;
  readonly legendFormat: string;
}

export interface PanelOptions {
  readonly unit?: string;
  readonly width?: number;
  readonly stack?: boolean;
  readonly min?: number;
  readonly max?: number;
}

/** A panel as the builders make it: Grafana's JSON, plus the width `layout` places it by. */
export interface PanelDraft {
  readonly type: string;
  readonly title: string;
  readonly width?: number;
  readonly targets?: ReadonlyArray<Target>;
  readonly [k: string]: unknown;
}

export interface Target {
  readonly refId: string;
  readonly expr: string;
  readonly [k: string]: unknown;
}

/** A placed panel: its id and grid position. */
export interface Panel {
  readonly id: number;
  readonly type: string;
  readonly title: string;
  readonly gridPos: { h: number; w: number; x: number; y: number };
  readonly targets?: ReadonlyArray<Target>;
  readonly [k: string]: unknown;
}

export const q = (expr: string, legend: string): Query => ({ expr, legendFormat: legend });

/** `rate(metric{sel}[window])`. */
export const rate = (metric: string, sel = ''): string => `rate(${metric}${sel ? `{${sel}}` : ''}[${RATE}])`;

/** p-quantile of a histogram's buckets, summed over everything but `le` (and `by`). */
export const quantile = (p: number, histogram: string, sel = '', by: readonly string[] = []): string =>
  `histogram_quantile(${p}, sum by (${['le', ...by].join(', ')}) (${rate(`${histogram}_bucket`, sel)}))`;

/** p50, p95 and p99 of a histogram: three queries. */
export const quantiles = (histogram: string, sel = ''): Query[] =>
  [0.5, 0.95, 0.99].map((p) => q(quantile(p, histogram, sel), `p${Math.round(p * 100)}`));

/** A time series panel. */
export function timeseries(title: string, description: string, targets: readonly Query[], o: PanelOptions = {}): PanelDraft {
  return {
    type: 'timeseries',
    title,
    description,
    datasource: DATASOURCE,
    width: o.width ?? 8,
    fieldConfig: {
      defaults: {
        unit: o.unit ?? 'short',
        ...(o.min !== undefined ? { min: o.min } : {}),
        ...(o.max !== undefined ? { max: o.max } : {}),
        custom: {
          drawStyle: 'line',
          lineWidth: 1,
          fillOpacity: o.stack ? 30 : 10,
          showPoints: 'never',
          stacking: { mode: o.stack ? 'normal' : 'none', group: 'A' },
        },
      },
      overrides: [],
    },
    options: { legend: { displayMode: 'list', placement: 'bottom', showLegend: true }, tooltip: { mode: 'multi', sort: 'desc' } },
    targets: targets.map((t, i) => ({
      refId: String.fromCharCode(65 + i),
      datasource: DATASOURCE,
      expr: t.expr,
      legendFormat: t.legendFormat,
      range: true,
    })),
  };
}

/** A single-value panel. */
export function stat(title: string, description: string, target: Query, o: PanelOptions = {}): PanelDraft {
  return {
    type: 'stat',
    title,
    description,
    datasource: DATASOURCE,
    width: o.width ?? 4,
    fieldConfig: { defaults: { unit: o.unit ?? 'short', decimals: 2 }, overrides: [] },
    options: {
      reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
      colorMode: 'value',
      graphMode: 'area',
      textMode: 'auto',
    },
    targets: [{ refId: 'A', datasource: DATASOURCE, expr: target.expr, legendFormat: target.legendFormat, instant: true }],
  };
}

/** A collapsible row header. */
export const row = (title: string): PanelDraft => ({ type: 'row', title, collapsed: false, panels: [] });

/** Ids and grid positions: panels flow left to right (8 units tall), a row takes a line of its own. */
export function layout(items: readonly PanelDraft[]): Panel[] {
  const H = 8;
  let x = 0;
  let y = 0;
  return items.map((p, i) => {
    const { width = 24, ...panel } = p;
    if (panel.type === 'row') {
      if (x > 0) y += H;
      x = 0;
      const out = { ...panel, id: i + 1, gridPos: { h: 1, w: 24, x: 0, y } };
      y += 1;
      return out;
    }
    if (x + width > 24) {
      x = 0;
      y += H;
    }
    const out = { ...panel, id: i + 1, gridPos: { h: H, w: width, x, y } };
    x += width;
    return out;
  });
}
