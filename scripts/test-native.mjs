// Builds and runs the plain C++ unit tests of libs/native-cuda (target mnemo_native_tests:
// src/native/tests/*.cc + core + cpu kernels, no Node-API) beside the addon in libs/native-cuda/build,
// then the kernel check's CPU half (mnemo_cuda_check --cpu: every kernel-contract op against
// its double-precision definition over every model's shapes; --device adds the CUDA half
// where a GPU is present and reports it skipped elsewhere).
// Exits non-zero when configuring, building or any test fails.
// Usage: node scripts/test-native.mjs [test-name-substring]
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkgDir = join(root, 'libs/native-cuda');
const jobs = process.env.MNEMO_BUILD_JOBS ?? '2';

function run(cmd, args) {
  console.log(`[test-native] ${cmd} ${args.join(' ')}`);
  const res = spawnSync(cmd, args, { cwd: pkgDir, stdio: 'inherit' });
  if (res.error) {
    console.error(`[test-native] cannot run ${cmd}: ${res.error.message}`);
    process.exit(1);
  }
  if (res.status !== 0) process.exit(res.status ?? 1);
}

const cuda = process.env.MNEMO_DISABLE_CUDA === '1' ? 'OFF' : 'ON';
const uring = process.env.MNEMO_DISABLE_URING === '1' ? 'OFF' : 'ON';
const targets = ['mnemo_native_tests', 'mnemo_cuda_check'];
const addonDir = join(pkgDir, 'build');

// The addon's own build folder (cmake-js, Release) already holds every core, kernel and CUDA
// object the tests link: the tests are added to it and only their own sources compile, instead of
// a second folder compiling all of it again (the CUDA objects alone are minutes of nvcc for three
// GPU architectures). Its cache keeps cmake-js's settings; the test targets stay out of `all`, so
// cmake-js's next build does not build them. MNEMO_NATIVE_TESTS_SEPARATE=1 (or no addon folder)
// keeps the separate build-tests folder.
let buildDir;
if (process.env.MNEMO_NATIVE_TESTS_SEPARATE !== '1' && existsSync(join(addonDir, 'CMakeCache.txt'))) {
  buildDir = addonDir;
  run('cmake', ['-S', pkgDir, '-B', buildDir, '-DMNEMO_BUILD_TESTS=ON', '-DMNEMO_BUILD_CUDA_CHECK=ON']);
} else {
  buildDir = join(pkgDir, 'build-tests');
  // Ninja when present (faster, and it leaves no generated `compiler_depend.ts` files that
  // eslint would try to parse, as Makefiles do); an existing folder keeps its generator.
  const hasNinja = spawnSync('ninja', ['--version'], { stdio: 'ignore' }).status === 0;
  const generator = hasNinja && !existsSync(join(buildDir, 'CMakeCache.txt')) ? ['-G', 'Ninja'] : [];
  run('cmake', [
    ...generator,
    '-S',
    pkgDir,
    '-B',
    buildDir,
    '-DCMAKE_BUILD_TYPE=RelWithDebInfo',
    '-DMNEMO_BUILD_TESTS=ON',
    '-DMNEMO_BUILD_CUDA_CHECK=ON',
    '-DMNEMO_BUILD_ADDON=OFF',
    `-DMNEMO_ENABLE_CUDA=${cuda}`,
    `-DMNEMO_ENABLE_URING=${uring}`,
  ]);
}
run('cmake', ['--build', buildDir, '--target', ...targets, '--parallel', jobs]);
run(join(buildDir, 'mnemo_native_tests'), process.argv.slice(2));
if (process.argv.length <= 2)
  run(join(buildDir, 'mnemo_cuda_check'), ['--cpu', '--device', '--shapes', join(pkgDir, 'tests/cuda_check/shapes.txt')]);
