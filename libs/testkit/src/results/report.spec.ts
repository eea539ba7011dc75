import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { at, DISAGREES, figures, headlinesInBand, readResults, renderReport, REPORT_COMMAND, REPORT_PATH, verdict } from './report.js';
import { BENCHMARKS, paperBand, targetOf, type HeadlineTarget } from './targets.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '../../../..');

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

  it('every results file has its benchmark described (libs/testkit/src/results/targets.ts)', () => {
    const names = readdirSync(join(root, 'bench/results'))
      .filter((f) => f.endsWith('.json') && !f.endsWith('.vl.json'))
      .map((f) => f.slice(0, -5));
    expect(names.filter((n) => !(n in BENCHMARKS))).toEqual([]);
  });
});

describe('results report', () => {
  it.each<[string, unknown, HeadlineTarget | undefined, string | undefined, string]>([
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

  describe('paper bands (two-sided)', () => {
    const fs = paperBand(3.7, 4.1);
    it('widens the paper range ×/÷ 1.5', () => {
      expect(fs.value).toEqual([2.467, 6.15]);
      expect(paperBand(2.4).value).toEqual([1.6, 3.6]);
    });
    it.each<[string, number, string]>([
      ['inside the band is met', 4, 'met'],
      ['at the widened low end is met', 2.467, 'met'],
      ['an overshoot disagrees, never met', 98.94, DISAGREES],
      ['just past the high end disagrees', 6.16, DISAGREES],
      ['a shortfall disagrees too', 0.8, DISAGREES],
    ])('%s', (_n, value, expected) => {
      expect(verdict(value, fs)).toBe(expected);
    });
    it('a missing figure has no verdict', () => expect(verdict(undefined, fs)).toBe('no figure'));
    it('every twin paper headline key is a band (FastSwitch P99 TTFT among them)', () => {
      expect(targetOf('twin-fastswitch', 'fastswitch.p99_ttft_ratio')).toMatchObject({ op: 'band', value: [2.467, 6.15] });
    });
    it('counts a results file’s headlines in band, listing each overshoot with its cause', () => {
      const r = headlinesInBand('twin-fastswitch', {
        fastswitch: { p99_ttft_ratio: 98.94, p999_tbt_ratio: 2.4, swap_out_reduction: 0.5 },
        disagreement_causes: { 'fastswitch.p99_ttft_ratio': 'the baseline stalls' },
      });
      expect(r.total).toBe(3);
      expect(r.in_band).toBe(2);
      expect(r.disagrees).toEqual([{ key: 'fastswitch.p99_ttft_ratio', value: 98.94, band: [2.467, 6.15], cause: 'the baseline stalls' }]);
    });
    it('the page shows the band and the paper range, and does not count an overshoot as met', () => {
      const text = renderReport({ 'twin-fastswitch': { json: { fastswitch: { p99_ttft_ratio: 98.94 } }, hasPlot: false } });
      expect(text).toContain(`| 98.94 | 2.467–6.15 (paper 3.7–4.1) | ${DISAGREES} |`);
      expect(text).toContain('| [twin-fastswitch](#twin-fastswitch) | not recorded | 0 of 1 |');
    });
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
    expect(text).toContain('| [fastswitch](#fastswitch) | 2026-01-02 | 1 of 1 | — |');
  });

  it("counts a twin file's baseline checks reproduced within ±0.25 and its headlines in band, and lists each check", () => {
    const text = renderReport({
      'twin-fastswitch': {
        json: {
          baseline_check: {
            near: { paper: 0.48, twin: 0.37, error: -0.229, source: 'Table 1' },
            far: { paper: 3.11, twin: 95.9, error: 29.8, source: 'Fig. 10', cause: 'vLLM | stalls' },
            none: { paper: 5, twin: null, error: null, source: '§V-B', cause: 'no figure' },
          },
          twin_headlines_in_band: { in_band: 1, total: 3, disagrees: [] },
        },
        hasPlot: false,
      },
    });
    expect(text).toContain('| [twin-fastswitch](#twin-fastswitch) | not recorded | — | 1 of 3 checks, 1 of 3 in band |');
    expect(text).toContain('reproduced within ±0.25): 1 of 3.');
    expect(text).toContain('| `near` | 0.48 | 0.37 | -0.229 | reproduced | Table 1 |');
    // An overshoot is not reproduced, and a cause's pipe does not break the table.
    expect(text).toContain('| `far` | 3.11 | 95.9 | 29.8 | not reproduced | Fig. 10; vLLM \\| stalls |');
    expect(text).toContain('| `none` | 5 | — (none) | — (none) | not reproduced | §V-B; no figure |');
  });
});
