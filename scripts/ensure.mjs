// Makes a fresh clone runnable: installs packages when missing or stale, builds the
// native addon when its binary is missing, and compiles the TypeScript projects.
import { execSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
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
const backendMarker = join(root, 'libs/native-cuda/build/Release/io-backend.json');
// An addon built with the pread/pwrite fallback (liburing could not be installed then) is rebuilt
// as soon as liburing's headers are there, so a busy apt lock at install time is not final.
const fallbackBuilt = () => existsSync(backendMarker) && JSON.parse(readFileSync(backendMarker, 'utf8')).uringCompiled === false;
const liburing = () => existsSync('/usr/include/liburing.h');
if (!existsSync(join(root, 'libs/native-cuda/build/Release/mnemo_native.node'))) {
  console.log('[ensure] building the native addon…');
  run('node scripts/build-native.mjs');
} else if (process.env.MNEMO_DISABLE_URING !== '1' && fallbackBuilt()) {
  if (liburing()) {
    console.log('[ensure] the native addon was built without io_uring and liburing is installed now: rebuilding…');
    run('node scripts/build-native.mjs');
  } else console.warn('[ensure] WARNING: SSD pools use the pread/pwrite fallback: apt-get install -y liburing-dev, then npm start');
}
console.log('[ensure] compiling TypeScript (tsc -b)…');
run('npx tsc -b');
