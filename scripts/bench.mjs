// `npm run bench -- NAME`: runs bench/NAME.bench.mjs against the built packages and leaves its
// figures in bench/results/NAME.json (plus a plot where it makes one), stamped with when and on
// what machine it ran; then regenerates docs/results.md from every results file.
// `npm run bench -- report` only regenerates docs/results.md; `npm run bench -- plots` re-renders
// every figure (bench/figures/NAME.figure.mjs → bench/results/NAME.vl.json + NAME.svg, Vega-Lite)
// from the committed results.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { REPORT_PATH, runStamp, writeFigure, writeReport } from '@mnemo/testkit';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const available = readdirSync(join(root, 'bench'))
  .filter((f) => f.endsWith('.bench.mjs'))
  .map((f) => f.replace(/\.bench\.mjs$/, ''));
const name = process.argv[2];
if (name === 'report') {
  writeReport(root);
  console.log(`wrote ${REPORT_PATH}`);
  process.exit(0);
}
if (name === 'plots') {
  for (const n of available) for (const f of await writeFigure(root, n)) console.log(`wrote ${f}`);
  writeReport(root);
  process.exit(0);
}
if (!name || !available.includes(name)) {
  console.error(
    `usage: npm run bench -- <name> [options]   (one of: ${available.join(', ') || 'none yet'})\n       npm run bench -- report             (regenerate ${REPORT_PATH} from bench/results/*.json)\n       npm run bench -- plots              (re-render every figure from bench/results/*.json)`,
  );
  process.exit(2);
}
mkdirSync(join(root, 'bench/results'), { recursive: true });
const file = join(root, 'bench', `${name}.bench.mjs`);
if (!existsSync(file)) process.exit(2);
const results = join(root, 'bench/results', `${name}.json`);
const startedMs = Date.now();
const loadStart = loadavg();
const r = spawnSync(process.execPath, [file, ...process.argv.slice(3)], { cwd: root, stdio: 'inherit' });
if (r.status === 0 && existsSync(results) && statSync(results).mtimeMs >= startedMs) {
  const json = JSON.parse(readFileSync(results, 'utf8'));
  delete json.run;
  writeFileSync(results, JSON.stringify({ run: runStamp({ args: process.argv.slice(2), loadStart }), ...json }, null, 2) + '\n');
  const figure = await writeFigure(root, name);
  writeReport(root);
  console.log(
    `stamped bench/results/${name}.json${figure.length ? `, rendered ${figure.join(' and ')}` : ''} and regenerated ${REPORT_PATH}: commit them`,
  );
}
process.exit(r.status ?? 1);
