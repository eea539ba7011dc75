// `node deploy/grafana/generate.mjs` writes deploy/grafana/mnemo.json from lib/dashboard.ts (compiled by `npx tsc -b` into dist/);
// `--check` only compares (exit 1 on a difference). Import the JSON in Grafana (Dashboards →
// New → Import) or provision the folder; pick the Prometheus datasource on import.
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { renderDashboard } from './dist/render.js';

const here = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({ options: { check: { type: 'boolean', default: false } } });
const file = join(here, 'mnemo.json');
const text = renderDashboard();
if (values.check) {
  if (!existsSync(file) || readFileSync(file, 'utf8') !== text) {
    console.error('deploy/grafana/mnemo.json is out of date: run `node deploy/grafana/generate.mjs`');
    process.exit(1);
  }
} else {
  writeFileSync(file, text);
  console.log(`deploy/grafana/mnemo.json: ${JSON.parse(text).panels.length} panels`);
}
