// Builds libs/native-cuda/build/Release/mnemo_native.node with cmake-js.
// Runs as the `install` script of @mnemo/native-cuda (cwd = libs/native-cuda) and from the
// repo root through scripts/ensure.mjs. Offline by construction: cmake-js is resolved from
// node_modules (not PATH), and `"binary": {"napi_versions": [8]}` in the package's
// package.json makes it use the bundled Node-API headers instead of downloading Node's.
// CUDA is compiled in when CMake finds nvcc and is never required.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkgDir = join(root, 'libs/native-cuda');
const require = createRequire(join(pkgDir, 'package.json'));

let cmakeJs;
try {
  cmakeJs = join(dirname(require.resolve('cmake-js/package.json')), 'bin', 'cmake-js');
} catch {
  // During a first `npm install` the workspace may be installed before the root devDeps
  // are linked; ensure.mjs builds the addon afterwards, so this is not fatal here.
  console.warn('[native-cuda] cmake-js is not installed yet; skipping the native build');
  process.exit(0);
}

const jobs = process.env.MNEMO_BUILD_JOBS ?? '2';
const args = [cmakeJs, 'build', '--directory', pkgDir, '--out', join(pkgDir, 'build'), '--parallel', jobs];
if (process.env.MNEMO_DISABLE_CUDA === '1') args.push('--CDMNEMO_ENABLE_CUDA=OFF');
console.log(`[native-cuda] cmake-js build (-j${jobs})`);
const res = spawnSync(process.execPath, args, { cwd: pkgDir, stdio: 'inherit', env: { ...process.env } });
if (res.status !== 0) {
  console.error(`[native-cuda] build failed (exit ${res.status ?? res.signal})`);
  process.exit(res.status || 1);
}
const out = join(pkgDir, 'build/Release/mnemo_native.node');
if (!existsSync(out)) {
  console.error(`[native-cuda] build finished but ${out} is missing`);
  process.exit(1);
}
console.log(`[native-cuda] built ${out}`);
