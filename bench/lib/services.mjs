// Services of a benchmark cluster as child processes of the bench: `node apps/<app>/dist/main.js`
// with the given environment, readiness on /readyz, and a bounded graceful stop.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Starts one service; its stderr tail is printed if it dies on its own. */
export function launch(app, env) {
  const child = spawn(process.execPath, [join(root, 'apps', app, 'dist', 'main.js')], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (d) => (err = (err + d).slice(-4000)));
  child.on('exit', (code) => {
    if (code && !child.stopping) console.error(`${app} exited ${code}: ${err}`);
  });
  return child;
}

/** Resolves once the service's ops endpoint answers /readyz with 200. */
export async function ready(port, timeoutMs = 120_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/readyz`)).ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > end) throw new Error(`service on ${port} not ready`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** SIGTERM, then at most 15 s for the service to drain and exit. */
export async function stop(child) {
  child.stopping = true;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
}
