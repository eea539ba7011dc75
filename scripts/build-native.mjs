// Builds libs/native-cuda/build/Release/mnemo_native.node with cmake-js.
// Runs as the `install` script of @mnemo/native-cuda (cwd = libs/native-cuda) and from the
// repo root through scripts/ensure.mjs. Offline by construction: cmake-js is resolved from
// node_modules (not PATH), and `"binary": {"napi_versions": [8]}` in the package's
// package.json makes it use the bundled Node-API headers instead of downloading Node's.
// CUDA is compiled in when CMake finds nvcc and is never required; so is io_uring (liburing):
// when its headers are missing and this is a Debian-like machine where we are root, the
// Debian package liburing-dev is installed first (as @mnemo/testkit startNats does for nats-server), waiting
// for the dpkg lock (MNEMO_APT_LOCK_WAIT_S, default 300) and retrying; otherwise, or when that
// fails, the addon is built with the pread/pwrite fallback and says so loudly. MNEMO_NO_APT=1
// never touches apt.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
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
  // Another apt or dpkg (an unattended upgrade, a parallel install) may hold the lock: apt waits
  // for it up to the timeout, and a failed attempt is retried, so a busy lock never silently
  // leaves the addon on the fallback.
  const lockWaitS = Math.max(0, Number(process.env.MNEMO_APT_LOCK_WAIT_S ?? 300));
  const lock = ['-o', `DPkg::Lock::Timeout=${lockWaitS}`];
  const apt = (args) => spawnSync('apt-get', [...lock, ...args], { stdio: ['ignore', 'ignore', 'inherit'], env }).status === 0;
  const attempts = 3;
  for (let attempt = 1; attempt <= attempts && !hasLiburing(); attempt++) {
    if (apt(['install', '-y', '--no-install-recommends', 'liburing-dev'])) break;
    // The package lists may be absent (fresh container): refresh them and retry.
    apt(['update']);
    if (apt(['install', '-y', '--no-install-recommends', 'liburing-dev'])) break;
    if (attempt < attempts) {
      const waitS = 10 * attempt;
      console.warn(`[native-cuda] apt-get failed (attempt ${attempt}/${attempts}; is another apt running?): retrying in ${waitS} s`);
      spawnSync('sleep', [String(waitS)]);
    }
  }
  if (!hasLiburing()) {
    console.warn(
      '[native-cuda] WARNING: could not install liburing-dev: building with the pread/pwrite fallback. SSD pools will run ' +
        'one request at a time (the node logs `pread/pwrite fallback` at start and /metrics labels mnemo_kv_ssd_backend). ' +
        'To get io_uring: `apt-get install -y liburing-dev`, then `node scripts/build-native.mjs`.',
    );
  }
}

if (process.env.MNEMO_DISABLE_URING !== '1') ensureLiburing();
const jobs = process.env.MNEMO_BUILD_JOBS ?? '2';
const out = join(pkgDir, 'build/Release/mnemo_native.node');
const BACKEND_MARKER = join(pkgDir, 'build/Release/io-backend.json');
// A build configured without liburing is configured afresh once liburing is there (CMake decides
// io_uring at configure time, and an incremental build would not configure again).
const fallbackBuilt = existsSync(BACKEND_MARKER) && JSON.parse(readFileSync(BACKEND_MARKER, 'utf8')).uringCompiled === false;
const verb = fallbackBuilt && process.env.MNEMO_DISABLE_URING !== '1' && hasLiburing() ? 'rebuild' : 'build';
const args = [cmakeJs, verb, '--directory', pkgDir, '--out', join(pkgDir, 'build'), '--parallel', jobs];
if (process.env.MNEMO_DISABLE_CUDA === '1') args.push('--CDMNEMO_ENABLE_CUDA=OFF');
if (process.env.MNEMO_DISABLE_URING === '1') args.push('--CDMNEMO_ENABLE_URING=OFF');
console.log(`[native-cuda] cmake-js ${verb} (-j${jobs})`);
const res = spawnSync(process.execPath, args, { cwd: pkgDir, stdio: 'inherit', env: { ...process.env } });
if (res.status !== 0) {
  console.error(`[native-cuda] build failed (exit ${res.status ?? res.signal})`);
  process.exit(res.status || 1);
}
if (!existsSync(out)) {
  console.error(`[native-cuda] build finished but ${out} is missing`);
  process.exit(1);
}
// Which SSD I/O backend the build has, said plainly and kept beside the binary, so
// scripts/ensure.mjs can rebuild once liburing is there (the fallback is never silent or final).
const probe = spawnSync(process.execPath, ['-e', `process.stdout.write(JSON.stringify(require(${JSON.stringify(out)}).ioInfo()))`], {
  encoding: 'utf8',
});
let io = null;
try {
  io = JSON.parse(probe.stdout);
} catch {
  console.warn(`[native-cuda] could not load ${out} to read its I/O backend: ${probe.stderr.trim()}`);
}
if (io) {
  writeFileSync(BACKEND_MARKER, JSON.stringify({ uringCompiled: io.uringCompiled }) + '\n');
  if (io.uringCompiled)
    console.log(`[native-cuda] SSD pools: io_uring${io.uringAvailable ? '' : ` compiled in, refused here (${io.uringReason})`}`);
  else console.warn('[native-cuda] WARNING: SSD pools: pread/pwrite fallback (built without liburing)');
}
console.log(`[native-cuda] built ${out}`);
