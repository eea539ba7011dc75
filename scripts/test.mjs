// `npm test`: every test there is, cheapest first, stopping at the first failure.
import { execSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const env = { ...process.env, NX_NO_CLOUD: 'true', NX_DAEMON: 'false' };
const step = (name, cmd) => {
  console.log(`\n[test] ${name}: ${cmd}`);
  execSync(cmd, { cwd: root, stdio: 'inherit', env });
};

step('lint (module boundaries, TS line width)', 'npx nx show projects > /dev/null && npx eslint .');
step('format (prettier, printWidth 140)', 'npx prettier --check --log-level warn "**/*.{ts,mts,mjs,js,cjs}"');
step('type-check tests', 'npx tsc -p tsconfig.spec.json');
step('native C++ unit tests', 'node scripts/test-native.mjs');
// Jest's default on two cores is one worker; the unit specs are CPU-bound and independent, so
// two workers use both cores (the main process only collects results).
step('unit', 'node --experimental-vm-modules node_modules/jest/bin/jest.js --selectProjects unit --maxWorkers=2');
// --forceExit: the in-process services' sockets and timers can outlive the last spec by many
// seconds (jest then waits for them and says so); every spec stops its own cluster in afterAll.
step('integration', 'node --experimental-vm-modules node_modules/jest/bin/jest.js --selectProjects integration --runInBand --forceExit');
