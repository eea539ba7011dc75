// Benchmark figures with Vega-Lite: each benchmark describes its figure as a Vega-Lite spec built
// from its results file (bench/figures/NAME.figure.mjs), and this module renders it to SVG
// with Vega (headless, no browser). The spec is kept beside the SVG (bench/results/NAME.vl.json,
// data inlined), so a figure can be re-rendered, restyled or opened in the Vega editor without
// rerunning the benchmark. `npm run bench -- NAME` renders NAME's figure after a run;
// `npm run bench -- plots` re-renders every figure from the committed results.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as vega from 'vega';
import * as vl from 'vega-lite';

export const VEGA_LITE_SCHEMA = 'https://vega.github.io/schema/vega-lite/v6.json';

/** A Vega-Lite view or spec as plain JSON. */
export type Spec = Record<string, unknown>;

/** One palette for every figure: a run's colour says nothing by itself, its legend does. */
export const PALETTE = ['#2166ac', '#b2182b', '#1b7837', '#e08214', '#762a83', '#92c5de', '#7fbc41', '#8073ac', '#35978f', '#888888'];

const CONFIG = {
  font: 'sans-serif',
  background: 'white',
  view: { stroke: null },
  axis: { labelFontSize: 10, titleFontSize: 11 },
  legend: { labelFontSize: 10, titleFontSize: 11 },
  title: { fontSize: 13, anchor: 'start' },
};

/** An x axis of context lengths in tokens (field `tokens`), log₂-scaled, ticked at the contexts a run measured. */
export function contextAxis(contexts: readonly number[]): Spec {
  return { field: 'tokens', type: 'quantitative', scale: { type: 'log', base: 2 }, title: 'context (tokens)', axis: { values: contexts } };
}

/** `values` as lines with a point at each datum: the curves of a figure (`mark` adds to the mark, e.g. a fixed colour). */
export function lineLayer(values: readonly unknown[], encoding: Spec, mark: Spec = {}): Spec {
  return { data: { values }, mark: { type: 'line', point: true, ...mark }, encoding };
}

/**
 * A paper's published points drawn over a figure's own: black rings, each with the text of its
 * `label` field placed by `label` (align, dx, dy). Two layers, to spread into a `layer` list.
 */
export function paperRings(values: readonly unknown[], x: Spec, y: Spec, label: Spec): Spec[] {
  return [
    {
      data: { values },
      mark: { type: 'point', shape: 'circle', size: 120, filled: false, color: 'black', strokeWidth: 1.5 },
      encoding: { x, y },
    },
    { data: { values }, mark: { type: 'text', ...label, fontSize: 9 }, encoding: { x, y, text: { field: 'label' } } },
  ];
}

/**
 * A full spec: schema, shared config, title. `body` is any Vega-Lite view (single, layered,
 * faceted or concatenated).
 */
export function figureSpec(title: string | string[], body: Spec): Spec {
  return { $schema: VEGA_LITE_SCHEMA, title: { text: title }, config: CONFIG, ...body };
}

export interface GroupedBars {
  readonly rows: Array<Record<string, string | number | null>>;
  readonly category: string;
  readonly series?: string;
  readonly value: string;
  readonly valueTitle: string;
  readonly categoryTitle?: string;
  readonly log?: boolean;
  readonly horizontal?: boolean;
  readonly width?: number;
  readonly height?: number;
  readonly format?: string;
  readonly label?: string | false;
  readonly rule?: number;
  readonly seriesOrder?: string[];
  readonly categoryOrder?: string[];
}

/**
 * Bars of `value` per `category`, one bar per `series` side by side, each labelled with its value
 * (or with the text in field `label`, or none with `label: false`); `rule` draws a dashed reference
 * line at that value. On a log axis bars start at 1 (a log scale has no zero).
 */
export function groupedBars(o: GroupedBars): Spec {
  const cat = {
    field: o.category,
    type: 'nominal',
    title: o.categoryTitle ?? null,
    sort: o.categoryOrder ?? null,
    axis: o.horizontal ? { labelLimit: 320 } : { labelAngle: -30, labelLimit: 160 },
  };
  const val = { field: o.value, type: 'quantitative', title: o.valueTitle, ...(o.log ? { scale: { type: 'log', domainMin: 1 } } : {}) };
  const [catCh, valCh, offCh, baseCh] = o.horizontal ? ['y', 'x', 'yOffset', 'x2'] : ['x', 'y', 'xOffset', 'y2'];
  const series = o.series ? { field: o.series, type: 'nominal', title: null, sort: o.seriesOrder ?? null } : undefined;
  const encoding = { [catCh]: cat, [valCh]: val, ...(series ? { [offCh]: series, color: { ...series, scale: { range: PALETTE } } } : {}) };
  const label = {
    type: 'text',
    [o.horizontal ? 'align' : 'baseline']: o.horizontal ? 'left' : 'bottom',
    [o.horizontal ? 'dx' : 'dy']: o.horizontal ? 3 : -2,
    fontSize: 9,
  };
  const text = o.label ? { field: o.label, type: 'nominal' } : { field: o.value, type: 'quantitative', format: o.format ?? '.3~r' };
  return {
    data: { values: o.rows },
    width: o.width ?? 360,
    height: o.height ?? 220,
    layer: [
      {
        mark: { type: 'bar', ...(series ? {} : { color: PALETTE[0] }) },
        encoding: { ...encoding, ...(o.log ? { [baseCh]: { datum: 1 } } : {}) },
      },
      ...(o.label === false ? [] : [{ mark: label, encoding: { ...encoding, text, color: { value: '#333' } } }]),
      ...(o.rule === undefined
        ? []
        : [{ mark: { type: 'rule', strokeDash: [4, 3], color: '#999' }, encoding: { [valCh]: { datum: o.rule } } }]),
    ],
  };
}

/** Empirical CDFs of samples (run name → samples), one line per run, on a log axis. */
export function cdf(runs: Record<string, number[]>, axis: { title: string; width?: number; height?: number }): Spec {
  const rows = Object.entries(runs).flatMap(([run, xs]) => {
    const s = xs.filter((x) => typeof x === 'number' && x > 0).sort((a, b) => a - b);
    return s.map((x, i) => ({ run, x, p: (i + 1) / s.length }));
  });
  return {
    data: { values: rows },
    width: axis.width ?? 420,
    height: axis.height ?? 260,
    mark: { type: 'line', interpolate: 'step-after', strokeWidth: 1.5 },
    encoding: {
      x: { field: 'x', type: 'quantitative', scale: { type: 'log' }, title: axis.title },
      y: { field: 'p', type: 'quantitative', title: 'CDF', scale: { domain: [0, 1] } },
      color: { field: 'run', type: 'nominal', title: null, sort: Object.keys(runs), scale: { range: PALETTE } },
    },
  };
}

/** The SVG Vega renders for a Vega-Lite spec (no browser; text measured by Vega's estimate). */
export async function renderSvg(spec: Spec): Promise<string> {
  const view = new vega.View(vega.parse(vl.compile(spec as unknown as vl.TopLevelSpec).spec), { renderer: 'none' });
  try {
    return `${await view.toSVG()}\n`;
  } finally {
    view.finalize();
  }
}

/** The spec as committed: stable key order as built, two-space JSON. */
export const specText = (spec: Spec): string => `${JSON.stringify(spec, null, 2)}\n`;

/** Benchmarks with a figure: those with a bench/figures/NAME.figure.mjs. */
export function figureModule(root: string, name: string): string | undefined {
  const file = join(root, 'bench/figures', `${name}.figure.mjs`);
  return existsSync(file) ? file : undefined;
}

/** NAME's figure builder (bench/figures/NAME.figure.mjs); throws when NAME has none. */
export async function loadFigure(root: string, name: string): Promise<(results: unknown) => Spec> {
  const module = figureModule(root, name);
  if (!module) throw new Error(`no figure for ${name} (bench/figures/${name}.figure.mjs)`);
  return ((await import(pathToFileURL(module).href)) as { figure: (results: unknown) => Spec }).figure;
}

/**
 * Builds NAME's figure from bench/results/NAME.json and writes NAME.vl.json and NAME.svg beside
 * it. Returns the files written, or [] when NAME has no figure or no results.
 */
export async function writeFigure(root: string, name: string): Promise<string[]> {
  const module = figureModule(root, name);
  const results = join(root, 'bench/results', `${name}.json`);
  if (!module || !existsSync(results)) return [];
  const { figure } = (await import(pathToFileURL(module).href)) as { figure: (results: unknown) => Spec };
  const spec = figure(JSON.parse(readFileSync(results, 'utf8')));
  const base = join(root, 'bench/results', name);
  writeFileSync(`${base}.vl.json`, specText(spec));
  writeFileSync(`${base}.svg`, await renderSvg(spec));
  return [`bench/results/${name}.vl.json`, `bench/results/${name}.svg`];
}
