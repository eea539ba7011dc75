// A node-manager as a real child process under the supervisor (restarted when it dies), for the
// specs that kill nodes: the sim engine, its own data dir and ops port, the test heartbeat.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, SupervisedProcess } from '@mnemo/testkit';
import { natsUrl, TEST_HEARTBEAT_MS } from './cluster.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const main = join(root, 'apps', 'node-manager', 'dist', 'main.js');

export interface SupervisedNode {
  readonly proc: SupervisedProcess;
  readonly metricsPort: number;
}

/** Starts node `name` (its data under `dataDir/name`); `env` adds to or overrides the defaults. */
export async function startSupervisedNode(opts: {
  name: string;
  dataDir: string;
  policy: { baseMs: number; maxMs: number; maxRestarts: number; windowMs: number };
  env?: Record<string, string>;
}): Promise<SupervisedNode> {
  if (!existsSync(main)) throw new Error(`${main} is not built: run \`npx tsc -b\` first`);
  const metricsPort = await freePort();
  const proc = new SupervisedProcess({
    name: opts.name,
    args: [main],
    cwd: root,
    env: {
      ...process.env,
      NATS_URL: natsUrl(),
      NODE_ID: opts.name,
      NODE_ENGINE: 'sim',
      NODE_HEARTBEAT_MS: String(TEST_HEARTBEAT_MS),
      METRICS_PORT: String(metricsPort),
      LOG_LEVEL: 'error',
      NODE_DATA_DIR: join(opts.dataDir, opts.name),
      NODE_KV_STORE: 'off',
      ...opts.env,
    },
    restart: true,
    policy: opts.policy,
  });
  proc.start();
  return { proc, metricsPort };
}
