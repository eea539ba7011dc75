// Services of a benchmark cluster as child processes of the bench: `node apps/<app>/dist/main.js`
// with the given environment, readiness on /readyz, and a bounded graceful stop.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect } from '@nats-io/transport-node';
import { freePort } from '@mnemo/testkit';

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

/**
 * A scheduler and one node-manager as child processes on `natsUrl`, the node's data in a fresh
 * directory named from `dataPrefix`, and a NATS connection: `use({ nc, nodePort, dataDir })` runs
 * once both answer on their ops ports; afterwards everything is stopped and the directory removed.
 * `nodeEnv(dataDir)`: the node's variables beyond NATS, logging, metrics and NODE_DATA_DIR.
 */
export async function withSchedulerAndNode({ natsUrl, dataPrefix, nodeEnv }, use) {
  const dataDir = mkdtempSync(join(tmpdir(), dataPrefix));
  const schedPort = await freePort();
  const nodePort = await freePort();
  const common = { NATS_URL: natsUrl, LOG_LEVEL: 'error', METRICS_HOST: '127.0.0.1' };
  const scheduler = launch('scheduler', { ...common, METRICS_PORT: String(schedPort) });
  const node = launch('node-manager', { ...common, METRICS_PORT: String(nodePort), NODE_DATA_DIR: dataDir, ...nodeEnv(dataDir) });
  const nc = await connect({ servers: natsUrl });
  try {
    await Promise.all([ready(schedPort), ready(nodePort)]);
    return await use({ nc, nodePort, dataDir });
  } finally {
    await nc.close();
    await stop(node);
    await stop(scheduler);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * Sim node-managers on `natsUrl`, one per `{ nodeId, blocks }` (device KV blocks), their data under
 * `dataDir`; `env`: what they share beyond NATS, logging, metrics and identity. Not awaited ready.
 */
export async function launchSimNodes({ natsUrl, dataDir, model, env = {} }, specs) {
  const nodes = [];
  for (const { nodeId, blocks } of specs) {
    const port = await freePort();
    const child = launch('node-manager', {
      ...env,
      NATS_URL: natsUrl,
      LOG_LEVEL: 'error',
      METRICS_HOST: '127.0.0.1',
      METRICS_PORT: String(port),
      NODE_ID: nodeId,
      NODE_ENGINE: 'sim',
      NODE_MODELS: model,
      NODE_KV_BLOCKS: String(blocks),
      NODE_DATA_DIR: join(dataDir, nodeId),
    });
    nodes.push({ nodeId, port, child });
  }
  return nodes;
}
