// docs/results.md, written from bench/results/*.json and nothing else: the one place the docs
// take benchmark figures from. `npm run bench -- report` writes it (the bench runner does too,
// after every benchmark), and a unit test regenerates it and fails when the committed page
// differs. The output depends only on the results files, so it is the same on every machine.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { BASELINE_ERROR_TARGET, baselineSummary, type BaselineCheck } from '@mnemo/twin';
import { BENCHMARKS, type HeadlineTarget } from './targets.js';

/** Where and when a run happened, stamped into its results file by the bench runner. */
export interface RunStamp {
  date: string;
  command?: string;
  machine?: { cpus: number; cpu: string; memory_gib: number; node: string; gpu?: string; host?: string };
  load_average?: { start: number[]; end: number[] };
  note?: string;
}

export interface HeadlinesInBand {
  in_band: number;
  total: number;
  disagrees: Array<{ key: string; value: unknown; band: [number, number]; cause: string }>;
}

/** A results file as the report reads it. */
export type ResultsJson = Record<string, unknown> & {
  run?: RunStamp;
  disagreement_causes?: Record<string, string>;
  twin_headlines_in_band?: HeadlinesInBand;
  baseline_check?: Record<string, BaselineCheck>;
};

export type ResultsSet = Record<string, { json: ResultsJson; hasPlot: boolean }>;

export const REPORT_PATH = 'docs/results.md';
export const REPORT_COMMAND = 'npm run bench -- report';

/** The stamp of a run that started with load average `loadStart` and ends now. */
export function runStamp({ args, loadStart, date = new Date() }: { args: string[]; loadStart: number[]; date?: Date }): RunStamp {
  const cpu = cpus();
  return {
    date: date.toISOString().slice(0, 10),
    command: `npm run bench -- ${args.join(' ')}`.trim(),
    machine: {
      cpus: cpu.length,
      cpu: cpu[0]?.model.trim() ?? 'unknown',
      memory_gib: Math.round(totalmem() / 2 ** 30),
      node: process.version,
    },
    load_average: { start: loadStart.map((x) => Math.round(x * 100) / 100), end: loadavg().map((x) => Math.round(x * 100) / 100) },
  };
}

/** `obj` at a dotted path, or undefined. */
export function at(obj: unknown, path: string): unknown {
  return path
    .split('.')
    .reduce<unknown>((o, k) => (o !== null && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), obj);
}

// '=' holds a flag to a value (a boolean target such as an order that must match).
type Op = Exclude<HeadlineTarget['op'], 'band'>;
type Comparable = number | boolean | string;
const OPS: Record<Op, (a: Comparable, b: Comparable) => boolean> = {
  '>=': (a, b) => a >= b,
  '<=': (a, b) => a <= b,
  '>': (a, b) => a > b,
  '<': (a, b) => a < b,
  '=': (a, b) => a === b,
};
const SHOW_OP: Record<Op, string> = { '>=': '≥', '<=': '≤', '>': '>', '<': '<', '=': '=' };
export const DISAGREES = 'disagrees_with_paper';

const fmt = (x: number): string => String(Math.round(x * 1000) / 1000);
/** A target as the page shows it: a band names the paper's range it was widened from. */
export function showTarget(target?: HeadlineTarget): string {
  if (!target) return '—';
  if (target.op !== 'band') return `${SHOW_OP[target.op]} ${target.value}`;
  const [plo, phi] = target.paper;
  return `${fmt(target.value[0])}–${fmt(target.value[1])} (paper ${plo === phi ? fmt(plo) : `${fmt(plo)}–${fmt(phi)}`})`;
}

/** Whether a value holds its target: a band holds both of its ends (an overshoot fails as a shortfall does). */
export function holds(value: unknown, target: HeadlineTarget): boolean {
  if (target.op === 'band') return typeof value === 'number' && value >= target.value[0] && value <= target.value[1];
  return OPS[target.op](value as Comparable, target.value);
}

/** 'met', 'not met', 'disagrees_with_paper' (a band missed on either side), or why there is no verdict. */
export function verdict(value: unknown, target?: HeadlineTarget, label?: string): string {
  if (label) return label;
  if (!target) return '';
  if (target.op === 'band') {
    if (typeof value !== 'number') return 'no figure';
    return holds(value, target) ? 'met' : DISAGREES;
  }
  if (typeof value !== typeof target.value) return 'no figure';
  return holds(value, target) ? 'met' : 'not met';
}

/**
 * A results file's paper-band headlines: how many hold their band, and for each that does not,
 * its value, band and cause (the file's own `disagreement_causes[path]` where the experiment traced
 * one, else the cause registered beside the target, else said to be untraced).
 */
export function headlinesInBand(name: string, json: ResultsJson): HeadlinesInBand {
  const keys = (BENCHMARKS[name]?.keys ?? []).filter((k) => k.target?.op === 'band' && !k.label && at(json, k.path) !== undefined);
  const bandOf = (t: HeadlineTarget | undefined) => t as Extract<HeadlineTarget, { op: 'band' }>;
  const disagrees = keys
    .filter((k) => !holds(at(json, k.path), bandOf(k.target)))
    .map((k) => ({
      key: k.path,
      value: at(json, k.path),
      band: bandOf(k.target).value,
      cause: json.disagreement_causes?.[k.path] ?? bandOf(k.target).cause ?? 'not traced yet',
    }));
  return { in_band: keys.length - disagrees.length, total: keys.length, disagrees };
}

const cell = (v: unknown): string => {
  if (v === undefined) return 'not in this run';
  if (v === null) return '— (none)';
  if (typeof v === 'string') return `\`${v.replace(/\|/g, '\\|').replace(/`/g, "'")}\``;
  if (Array.isArray(v)) return v.map((x) => (x === null ? '—' : String(x))).join(', ');
  return String(v);
};

/** Every scalar (and short list of scalars) of a results file, as [dotted path, value]. */
export function figures(json: ResultsJson, maxDepth = 4): Array<[string, unknown]> {
  const out: Array<[string, unknown]> = [];
  const walk = (v: unknown, path: string, depth: number): void => {
    if (Array.isArray(v)) {
      if (v.length > 0 && v.length <= 8 && v.every((x) => x === null || ['number', 'boolean'].includes(typeof x))) out.push([path, v]);
      return;
    }
    if (v !== null && typeof v === 'object') {
      if (depth >= maxDepth) return;
      for (const [k, x] of Object.entries(v)) walk(x, path ? `${path}.${k}` : k, depth + 1);
      return;
    }
    if (typeof v === 'string' && v.length > 80) return;
    out.push([path, v]);
  };
  for (const [k, v] of Object.entries(json)) if (k !== 'run') walk(v, k, 1);
  return out;
}

function machine(json: ResultsJson): string {
  const m = json.run?.machine;
  if (m?.gpu) return `${m.gpu}${m.host ? `, ${m.host}` : ''}`;
  if (m) return `${m.cpus} × ${m.cpu}, ${m.memory_gib} GiB, Node ${m.node}`;
  return 'not recorded';
}

function runLine(name: string, json: ResultsJson): string {
  const run = json.run;
  if (!run) return `Run: not recorded (the file carries no \`run\` stamp; re-run \`npm run bench -- ${name}\`).`;
  const load = run.load_average
    ? `, load average ${run.load_average.start[0]} → ${run.load_average.end[0]} (other work shared the machine)`
    : '';
  const how = run.command ? ` with \`${run.command}\`` : '';
  const note = run.note ? ` ${run.note}` : '';
  return `Run on ${run.date}${how}; machine: ${machine(json)}${load}.${note}`;
}

function section(name: string, json: ResultsJson, hasPlot: boolean): string {
  const spec = BENCHMARKS[name] ?? { what: 'No description registered in libs/testkit/src/results/targets.ts.', keys: [] };
  const lines = [`## ${name}`, '', spec.what + '.', '', runLine(name, json), ''];
  if (spec.keys.length > 0) {
    lines.push('| key | what | value | target | |', '|---|---|---|---|---|');
    for (const k of spec.keys) {
      const v = at(json, k.path);
      const target = showTarget(k.target);
      lines.push(`| \`${k.path}\` | ${k.what} | ${cell(v)} | ${target} | ${verdict(v, k.target, v === undefined ? undefined : k.label)} |`);
    }
    lines.push('');
  }
  if (hasPlot)
    lines.push(
      `Plot: [${name}.svg](../bench/results/${name}.svg) (Vega-Lite spec: [${name}.vl.json](../bench/results/${name}.vl.json))`,
      '',
    );
  if (json.baseline_check) lines.push(...baselineTable(json.baseline_check));
  const band = json.twin_headlines_in_band;
  if (band?.disagrees?.length) {
    lines.push('Headlines outside their paper band, each with its cause:', '');
    for (const d of band.disagrees) lines.push(`- \`${d.key}\` = ${cell(d.value)}, band ${fmt(d.band[0])}–${fmt(d.band[1])}: ${d.cause}`);
    lines.push('');
  }
  const all = figures(json);
  lines.push(
    `<details><summary>Every figure in <code>bench/results/${name}.json</code> (${all.length})</summary>`,
    '',
    '| key | value |',
    '|---|---|',
  );
  for (const [path, v] of all) lines.push(`| \`${path}\` | ${cell(v)} |`);
  lines.push('', '</details>', '');
  return lines.join('\n');
}

/** A twin file's checks against the papers' own baseline figures, each reproduced or not, with its cause. */
function baselineTable(checks: Record<string, BaselineCheck>): string[] {
  const { within, total, outside } = baselineSummary(checks);
  const lines = [
    "Baseline checks against the papers' own figures " +
      `(error = twin ÷ paper − 1; reproduced within ±${BASELINE_ERROR_TARGET}): ${within} of ${total}.`,
    '',
    '| check | paper | twin | error | | source; cause where not reproduced |',
    '|---|---|---|---|---|---|',
  ];
  for (const [name, c] of Object.entries(checks)) {
    const ok = !outside.includes(name);
    const why = [c.source, c.cause].filter(Boolean).join('; ').replace(/\|/g, '\\|');
    lines.push(
      `| \`${name}\` | ${cell(c.paper)} | ${cell(c.twin)} | ${cell(c.error)} | ${ok ? 'reproduced' : 'not reproduced'} | ${why} |`,
    );
  }
  lines.push('');
  return lines;
}

/** A results file's standing against the papers: baseline checks reproduced, headlines inside their bands. */
function paperStanding(json: ResultsJson): string {
  const parts: string[] = [];
  if (json.baseline_check) {
    const { within, total } = baselineSummary(json.baseline_check);
    parts.push(`${within} of ${total} checks`);
  }
  const band = json.twin_headlines_in_band;
  if (band) parts.push(`${band.in_band} of ${band.total} in band`);
  return parts.length ? parts.join(', ') : '—';
}

/** The page for a set of results: { name: { json, hasPlot } }, in name order. */
export function renderReport(results: ResultsSet): string {
  const names = Object.keys(results).sort();
  const head = [
    '# Benchmark results',
    '',
    `<!-- Generated by \`${REPORT_COMMAND}\` from bench/results/*.json. Do not edit: re-run the command. -->`,
    '',
    `Written by \`${REPORT_COMMAND}\` from the results files in \`bench/results/\` (each benchmark's`,
    'runner regenerates it too). The other docs quote no figure of their own: they link here. Each section',
    'gives when and where its benchmark last ran, its headline keys against their targets (the targets',
    'live in `libs/testkit/src/results/`), then every figure its file holds. A key marked with a',
    'label (a constructed case, a strawman baseline, host memory on one side) is shown but is not a',
    'like-for-like headline. Runs share a 2-core machine with other work; each benchmark measures',
    'Mnemo and its baseline in the same run, so the ratios are what counts.',
    '',
    "A band target is the paper's reported range for that ratio widened ×/÷ 1.5: a figure outside it on either side",
    `is \`${DISAGREES}\` (an overshoot means a baseline or model is off), never met.`,
    '',
    "For the twin's experiments the last column counts their baseline checks reproduced (within",
    `±${BASELINE_ERROR_TARGET} of the paper's own figure) and their paper-band headlines inside the band.`,
    '',
    '| benchmark | last run | headline keys met | against the papers |',
    '|---|---|---|---|',
  ];
  for (const name of names) {
    const { json } = results[name];
    const keys = (BENCHMARKS[name]?.keys ?? []).filter((k) => k.target && !k.label && at(json, k.path) !== undefined);
    const met = keys.filter((k) => verdict(at(json, k.path), k.target) === 'met').length;
    const headlines = keys.length ? `${met} of ${keys.length}` : '—';
    head.push(`| [${name}](#${name}) | ${json.run?.date ?? 'not recorded'} | ${headlines} | ${paperStanding(json)} |`);
  }
  head.push('');
  return [head.join('\n'), ...names.map((n) => section(n, results[n].json, results[n].hasPlot))].join('\n').trimEnd() + '\n';
}

/** The results files of a checkout, parsed. */
export function readResults(root: string): ResultsSet {
  const dir = join(root, 'bench/results');
  const files = readdirSync(dir);
  return Object.fromEntries(
    files
      // NAME.vl.json beside NAME.svg is the figure's Vega-Lite spec, not a results file.
      .filter((f) => f.endsWith('.json') && !f.endsWith('.vl.json'))
      .map((f) => f.slice(0, -'.json'.length))
      .map((name) => [
        name,
        { json: JSON.parse(readFileSync(join(dir, `${name}.json`), 'utf8')) as ResultsJson, hasPlot: files.includes(`${name}.svg`) },
      ]),
  );
}

export function writeReport(root: string): string {
  const text = renderReport(readResults(root));
  writeFileSync(join(root, REPORT_PATH), text);
  return text;
}
