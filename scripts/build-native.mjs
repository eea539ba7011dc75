// Builds libs/native-cuda/build/Release/mnemo_native.node with cmake-js.
// Runs as the `install` script of @mnemo/native-cuda (cwd = libs/native-cuda) and from the
// repo root through scripts/ensure.mjs. Offline by construction: cmake-js is resolved from
// node_modules (not PATH), and `"binary": {"napi_versions": [8]}` in the package's
// package.json makes it use the bundled Node-API headers instead of downloading Node's.
// CUDA is compiled in when CMake finds nvcc and is never required; so is io_uring (liburing):
// when its headers are missing and this is a Debian-like machine where we are root, the
// Debian package liburing-dev is installed first (as tools/infra does for nats-server);
// otherwise, or when that fails, the addon is built with the pread/pwrite fallback and says
// so. MNEMO_NO_APT=1 never touches apt.
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

/** Whether liburing's headers and library are installed. */
function hasLiburing() {
  const pc = spawnSync('pkg-config', ['--exists', 'liburing'], { stdio: 'ignore' });
  if (pc.status === 0) return true;
  return existsSync('/usr/include/liburing.h');
}

/** Installs liburing-dev with apt when we may; never fails the build. */
function ensureLiburing() {
  if (hasLiburing()) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const hasApt = spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status === 0;
  if (process.env.MNEMO_NO_APT === '1' || !isRoot || !hasApt) {
    console.warn(
      '[native-cuda] liburing-dev is not installed: SSD pool devices will use pread/pwrite instead of io_uring ' +
        '(install it with `sudo apt-get install -y liburing-dev` and rebuild)',
    );
    return;
  }
  console.log('[native-cuda] liburing-dev missing: installing the Debian package (apt-get install -y liburing-dev)…');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const apt = (args) => spawnSync('apt-get', args, { stdio: ['ignore', 'ignore', 'inherit'], env }).status === 0;
  // The package lists may be absent (fresh container): refresh them once and retry.
  if (!apt(['install', '-y', '--no-install-recommends', 'liburing-dev'])) {
    apt(['update']);
    apt(['install', '-y', '--no-install-recommends', 'liburing-dev']);
  }
  if (!hasLiburing()) {
    console.warn('[native-cuda] could not install liburing-dev: building with the pread/pwrite fallback');
  }
}

if (process.env.MNEMO_DISABLE_URING !== '1') ensureLiburing();
const jobs = process.env.MNEMO_BUILD_JOBS ?? '2';
const args = [cmakeJs, 'build', '--directory', pkgDir, '--out', join(pkgDir, 'build'), '--parallel', jobs];
if (process.env.MNEMO_DISABLE_CUDA === '1') args.push('--CDMNEMO_ENABLE_CUDA=OFF');
if (process.env.MNEMO_DISABLE_URING === '1') args.push('--CDMNEMO_ENABLE_URING=OFF');
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
