// `npm run bench -- NAME`: runs bench/NAME.bench.mjs against the built packages and
// leaves its figures in bench/results/NAME.json (plus a plot where it makes one).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const available = readdirSync(join(root, 'bench'))
  .filter((f) => f.endsWith('.bench.mjs'))
  .map((f) => f.replace(/\.bench\.mjs$/, ''));
const name = process.argv[2];
if (!name || !available.includes(name)) {
  console.error(`usage: npm run bench -- <name>   (one of: ${available.join(', ') || 'none yet'})`);
  process.exit(2);
}
mkdirSync(join(root, 'bench/results'), { recursive: true });
const file = join(root, 'bench', `${name}.bench.mjs`);
if (!existsSync(file)) process.exit(2);
const r = spawnSync(process.execPath, [file, ...process.argv.slice(3)], { cwd: root, stdio: 'inherit' });
process.exit(r.status ?? 1);
