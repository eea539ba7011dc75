// `npm run build`: everything a service needs to run from dist/ — the native addon
// (libs/native-cuda via cmake-js, CUDA only where nvcc is found; incremental) and every
// TypeScript project (`tsc -b`, incremental). Installs nothing: `npm start` / `npm test`
// run scripts/ensure.mjs for that.
import { execSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const run = (cmd) => execSync(cmd, { cwd: root, stdio: 'inherit', env: { ...process.env, NX_NO_CLOUD: 'true', NX_DAEMON: 'false' } });

run(`"${process.execPath}" scripts/build-native.mjs`);
run('npx tsc -b');
