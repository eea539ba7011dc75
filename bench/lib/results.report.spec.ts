import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { at, figures, readResults, renderReport, REPORT_COMMAND, REPORT_PATH, verdict } from './results.report.mjs';
import { BENCHMARKS } from './results.targets.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');

describe('docs/results.md', () => {
  it('is what the results files give (regenerated here and compared)', () => {
    const committed = existsSync(join(root, REPORT_PATH)) ? readFileSync(join(root, REPORT_PATH), 'utf8') : '';
    const fresh = renderReport(readResults(root));
    if (fresh !== committed) {
      throw new Error(
        `${REPORT_PATH} is out of date with bench/results/*.json: run \`${REPORT_COMMAND}\` and commit ${REPORT_PATH} with the results.`,
      );
    }
  });

  it('every results file has its benchmark described (bench/lib/results.targets.mjs)', () => {
    const names = readdirSync(join(root, 'bench/results'))
      .filter((f) => f.endsWith('.json') && !f.endsWith('.vl.json'))
      .map((f) => f.slice(0, -5));
    expect(names.filter((n) => !(n in BENCHMARKS))).toEqual([]);
  });
});

describe('results report', () => {
  it.each<[string, unknown, { op: string; value: number | boolean } | undefined, string | undefined, string]>([
    ['≥ met at the bound', 2, { op: '>=', value: 2 }, undefined, 'met'],
    ['≥ not met below', 1.99, { op: '>=', value: 2 }, undefined, 'not met'],
    ['≤ met', 0.05, { op: '<=', value: 0.1 }, undefined, 'met'],
    ['> not met at the bound', 1, { op: '>', value: 1 }, undefined, 'not met'],
    ['a missing figure has no verdict', null, { op: '>=', value: 2 }, undefined, 'no figure'],
    ['a labelled key shows its label, never "met"', 3, { op: '>=', value: 2 }, 'constructed', 'constructed'],
    ['no target, no verdict', 3, undefined, undefined, ''],
    ['= met by the same flag', true, { op: '=', value: true }, undefined, 'met'],
    ['= not met by the other flag', false, { op: '=', value: true }, undefined, 'not met'],
    ['a figure of another type than its target has no verdict', 1, { op: '=', value: true }, undefined, 'no figure'],
  ])('verdict: %s', (_n, value, target, label, expected) => {
    expect(verdict(value, target, label)).toBe(expected);
  });

  it('reads dotted paths', () => {
    expect(at({ a: { b: { c: 3 } } }, 'a.b.c')).toBe(3);
    expect(at({ a: 1 }, 'a.b')).toBeUndefined();
  });

  it('lists scalars and short numeric lists, not long text, deep objects or the run stamp', () => {
    const json = {
      run: { date: 'x' },
      a: 1,
      b: { c: 'short', d: 'x'.repeat(81) },
      e: [1, 2],
      f: [{ g: 1 }],
      h: { i: { j: { k: { l: 1 } } } },
    };
    expect(figures(json)).toEqual([
      ['a', 1],
      ['b.c', 'short'],
      ['e', [1, 2]],
    ]);
  });

  it('renders headline keys with target and verdict, and a run line', () => {
    const text = renderReport({
      fastswitch: {
        json: {
          run: {
            date: '2026-01-02',
            command: 'npm run bench -- fastswitch',
            machine: { cpus: 2, cpu: 'X', memory_gib: 24, node: 'v20' },
            load_average: { start: [1], end: [2] },
          },
          p99_ttft_baseline_over_fastswitch: 2.5,
        },
        hasPlot: false,
      },
    });
    expect(text).toContain('| `p99_ttft_baseline_over_fastswitch` | P99 TTFT, baseline ÷ FastSwitch | 2.5 | ≥ 2 | met |');
    expect(text).toContain('Run on 2026-01-02 with `npm run bench -- fastswitch`; machine: 2 × X, 24 GiB, Node v20, load average 1 → 2');
    expect(text).toContain('| [fastswitch](#fastswitch) | 2026-01-02 | 1 of 1 |');
  });
});
