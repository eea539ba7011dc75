// Makes a fresh clone runnable: installs packages when missing or stale, builds the
// native addon when its binary is missing, and compiles the TypeScript projects.
import { execSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const run = (cmd) => execSync(cmd, { cwd: root, stdio: 'inherit', env: { ...process.env, NX_NO_CLOUD: 'true', NX_DAEMON: 'false' } });
const mtime = (p) => (existsSync(join(root, p)) ? statSync(join(root, p)).mtimeMs : 0);

const marker = 'node_modules/.package-lock.json';
if (!existsSync(join(root, marker)) || mtime('package-lock.json') > mtime(marker) || mtime('package.json') > mtime(marker)) {
  console.log('[ensure] installing packages (npm install)…');
  // Building needs the dev toolchain (tsc, cmake-js) even where NODE_ENV=production (the image).
  run('npm install --no-audit --no-fund --include=dev');
}
if (!existsSync(join(root, 'libs/native-cuda/build/Release/mnemo_native.node'))) {
  console.log('[ensure] building the native addon…');
  run('node scripts/build-native.mjs');
}
console.log('[ensure] compiling TypeScript (tsc -b)…');
run('npx tsc -b');
