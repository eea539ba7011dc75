import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as vl from 'vega-lite';
import { cdf, figureSpec, groupedBars, renderSvg, specText } from './plot.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const figures = readdirSync(join(root, 'bench/figures'))
  .filter((f) => f.endsWith('.figure.mjs'))
  .map((f) => f.slice(0, -'.figure.mjs'.length));
type Spec = Record<string, unknown>;
const load = async (name: string): Promise<Spec> => {
  const { figure } = (await import(pathToFileURL(join(root, 'bench/figures', `${name}.figure.mjs`)).href)) as {
    figure: (r: unknown) => Spec;
  };
  return figure(JSON.parse(readFileSync(join(root, 'bench/results', `${name}.json`), 'utf8')));
};

describe('benchmark figures (Vega-Lite)', () => {
  it('every benchmark that drew a plot has a figure module, and no benchmark writes SVG by hand', () => {
    const benches = readdirSync(join(root, 'bench')).filter((f) => f.endsWith('.bench.mjs'));
    for (const b of benches) expect([b, readFileSync(join(root, 'bench', b), 'utf8').includes('<svg')]).toEqual([b, false]);
    const plotted = readdirSync(join(root, 'bench/results'))
      .filter((f) => f.endsWith('.svg'))
      .map((f) => f.slice(0, -4));
    expect(plotted.sort()).toEqual([...figures].sort());
  });

  it.each(figures)('%s: the committed spec and SVG are what its results file gives (npm run bench -- plots)', async (name) => {
    const spec = await load(name);
    expect(vl.compile(spec as unknown as vl.TopLevelSpec).spec).toBeDefined();
    const stale = (file: string, fresh: string) =>
      !existsSync(join(root, 'bench/results', file)) || readFileSync(join(root, 'bench/results', file), 'utf8') !== fresh;
    if (stale(`${name}.vl.json`, specText(spec))) throw new Error(`bench/results/${name}.vl.json is stale: run \`npm run bench -- plots\``);
    if (stale(`${name}.svg`, await renderSvg(spec))) throw new Error(`bench/results/${name}.svg is stale: run \`npm run bench -- plots\``);
  });
});

describe(groupedBars.name, () => {
  const rows = [
    { run: 'a', q: 'p50', ms: 10 },
    { run: 'a', q: 'p99', ms: 40 },
    { run: 'b', q: 'p50', ms: 20 },
    { run: 'b', q: 'p99', ms: 80 },
  ];

  it('renders one bar per row, side by side per category, each with its value as a label', async () => {
    const svg = await renderSvg(figureSpec('t', groupedBars({ rows, category: 'run', series: 'q', value: 'ms', valueTitle: 'ms' })));
    const bars = [
      ...svg.matchAll(/aria-label="run: (\w); ms: (\d+); q: (p\d+)" role="graphics-symbol" aria-roledescription="bar"[^>]*fill="(#\w+)"/g),
    ].map((m) => m.slice(1).join(' '));
    expect(bars).toEqual(['a 10 p50 #2166ac', 'a 40 p99 #b2182b', 'b 20 p50 #2166ac', 'b 80 p99 #b2182b']);
    const labels = [...svg.matchAll(/aria-roledescription="text mark"[^>]*>([^<]+)<\/text>/g)].map((m) => m[1]);
    expect(labels).toEqual(['10', '40', '20', '80']);
  });

  it.each<[string, Parameters<typeof groupedBars>[0], (layers: Spec[]) => void]>([
    [
      'horizontal bars put the value on x',
      { rows, category: 'run', value: 'ms', valueTitle: 'ms', horizontal: true },
      (l) => expect(l[0]!.encoding).toMatchObject({ y: { field: 'run' }, x: { field: 'ms' } }),
    ],
    [
      'a log axis starts its bars at 1',
      { rows, category: 'run', value: 'ms', valueTitle: 'ms', log: true },
      (l) => expect(l[0]!.encoding).toMatchObject({ y: { scale: { type: 'log' } }, y2: { datum: 1 } }),
    ],
    [
      'label: false draws no labels',
      { rows, category: 'run', value: 'ms', valueTitle: 'ms', label: false },
      (l) => expect(l).toHaveLength(1),
    ],
    [
      'a label field replaces the value',
      { rows: rows.map((r) => ({ ...r, t: `${r.ms} ms` })), category: 'run', value: 'ms', valueTitle: 'ms', label: 't' },
      (l) => expect(l[1]!.encoding).toMatchObject({ text: { field: 't' } }),
    ],
    [
      'a reference rule at 1 is a layer of its own',
      { rows, category: 'run', value: 'ms', valueTitle: 'ms', rule: 1 },
      (l) => expect(l[2]).toMatchObject({ mark: { type: 'rule' }, encoding: { y: { datum: 1 } } }),
    ],
  ])('%s', (_n, o, check) => {
    const spec = groupedBars(o);
    check(spec.layer as Spec[]);
    expect(vl.compile(figureSpec('t', spec) as unknown as vl.TopLevelSpec).spec).toBeDefined();
  });
});

describe(cdf.name, () => {
  it('gives each run its empirical CDF, leaving out missing and non-positive samples (log axis)', () => {
    const spec = cdf({ a: [3, 1, 2, Number.NaN, 0], b: [5] }, { title: 'ms' }) as {
      data: { values: Array<{ run: string; x: number; p: number }> };
    };
    expect(spec.data.values).toEqual([
      { run: 'a', x: 1, p: 1 / 3 },
      { run: 'a', x: 2, p: 2 / 3 },
      { run: 'a', x: 3, p: 1 },
      { run: 'b', x: 5, p: 1 },
    ]);
  });
});
