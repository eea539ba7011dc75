// @mnemo/testkit for plain .mjs entry points that may run before `npm start` / `npm test` /
// `npm run bench` have compiled it (jest's global set-up, `node scripts/tls.mjs`, …): a static
// `import '@mnemo/testkit'` would load libs/testkit/dist as it is — missing in a fresh clone,
// stale after an edit. `loadTestkit()` brings dist up to date first (`tsc -b libs/testkit`:
// incremental, well under a second when nothing changed) and then imports it.
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** @returns {Promise<typeof import('@mnemo/testkit')>} */
export async function loadTestkit() {
  try {
    execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-b', join(root, 'libs', 'testkit')], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (e) {
    const out = `${e.stdout ?? ''}${e.stderr ?? ''}`.trim();
    throw new Error(`compiling libs/testkit (tsc -b libs/testkit) failed:\n${out || e.message}`);
  }
  return import('@mnemo/testkit');
}
