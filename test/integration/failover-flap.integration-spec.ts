// The node-down timing does not flap (issue 29, item 1): with the default timings — nodes beat
// every 500 ms, the scheduler announces a node down after 1,500 ms of silence — two node-manager
// processes serving a steady stream of requests on a loaded machine are never dropped or announced
// down. The 1-minute load average is printed; the issue asks for this at a load of 4 or more on 2
// cores, which a shared CI machine usually exceeds (the spec does not generate load itself).
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Subjects } from '@mnemo/proto';
import { freePort, SupervisedProcess } from '@mnemo/testkit';
import { Cluster, natsUrl, scrape } from './cluster.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const main = join(root, 'apps', 'node-manager', 'dist', 'main.js');
const WINDOW_MS = 20_000;

describe('node-down timing at the defaults', () => {
  let cluster: Cluster;
  let dataDir: string;
  const nodes: SupervisedProcess[] = [];

  beforeAll(async () => {
    if (!existsSync(main)) throw new Error(`${main} is not built: run \`npx tsc -b\` first`);
    dataDir = mkdtempSync(join(tmpdir(), 'mnemo-flap-'));
    // The scheduler's own default timeout (Cluster.start sets the tests' 1 s otherwise).
    cluster = await Cluster.start({ nodes: 0, gateway: true, schedulerEnv: { SCHEDULER_NODE_TIMEOUT_MS: undefined } });
    for (const name of ['flap-a', 'flap-b'].map((n) => `${n}-${process.pid}`)) {
      const env: Record<string, string | undefined> = {
        ...process.env,
        NATS_URL: natsUrl(),
        NODE_ID: name,
        NODE_ENGINE: 'sim',
        METRICS_PORT: String(await freePort()),
        LOG_LEVEL: 'error',
        NODE_DATA_DIR: join(dataDir, name),
        NODE_KV_STORE: 'off',
        NODE_SIM_DECODE_STEP_MS: '5',
      };
      delete env.NODE_HEARTBEAT_MS; // the default beat
      const proc = new SupervisedProcess({ name, args: [main], cwd: root, env, restart: false });
      proc.start();
      nodes.push(proc);
    }
    await cluster.waitForLiveNodes(2, 60_000);
  }, 120_000);

  afterAll(async () => {
    for (const p of nodes) await p.stop(5000);
    await cluster?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it(`keeps both nodes for ${WINDOW_MS / 1000} s of steady load: no drop, no NODE_DOWN`, async () => {
    let downs = 0;
    const sub = cluster.nc.subscribe(Subjects.NODE_DOWN, { callback: () => void downs++ });
    const load = [loadavg()[0]];
    const end = Date.now() + WINDOW_MS;
    let served = 0;
    await Promise.all(
      Array.from({ length: 3 }, async (_, c) => {
        for (let i = 0; Date.now() < end; i++) {
          const res = await fetch(`http://127.0.0.1:${cluster.gateway!.httpPort}/v1/completions`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({
              model: 'mnemo-tiny',
              prompt: Array.from({ length: 200 + i }, (_, j) => 32 + ((j * 3 + c) % 90)),
              max_tokens: 64,
              temperature: 0,
            }),
            signal: AbortSignal.timeout(30_000),
          });
          expect(res.status).toBe(200);
          await res.json();
          served++;
        }
      }),
    );
    load.push(loadavg()[0]);
    sub.unsubscribe();
    console.log(
      `node-down timing at the defaults: ${served} requests in ${WINDOW_MS / 1000} s, 1-min load ` +
        `average ${load.map((l) => l.toFixed(1)).join(' → ')} on ${availableParallelism()} cores`,
    );
    expect(served).toBeGreaterThan(10);
    expect(downs).toBe(0);
    expect((await scrape(cluster.schedulers[0]!.metricsPort, 'mnemo_scheduler_nodes_dropped_total')) ?? 0).toBe(0);
  }, 90_000);
});
