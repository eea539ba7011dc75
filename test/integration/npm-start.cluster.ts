// The local cluster exactly as `npm start` runs it (scripts/start.mjs: scheduler, two node-managers
// with the reference engine and every model in the repo, gateway), as separate processes against
// the test run's NATS. For tests that check what a new user meets, default settings included.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { natsUrl } from './cluster.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface NpmStartCluster {
  /** e.g. http://127.0.0.1:PORT */
  readonly baseUrl: string;
  readonly grpcPort: number;
  /** Ops (/metrics) port of each service, by name (scheduler, node-a, node-b, gateway). */
  readonly metricsPorts: ReadonlyMap<string, number>;
  /** The cluster's output so far (JSON lines), for failure messages. */
  log(): string;
  stop(): Promise<void>;
}

/**
 * Starts `node scripts/start.mjs` on free gateway ports and waits until it says it is up
 * (every service ready and a model listed). `only` limits the services (MNEMO_START_ONLY);
 * the profiler is not needed to serve completions.
 */
export async function startNpmCluster(
  opts: { only?: readonly string[]; env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<NpmStartCluster> {
  const [httpPort, grpcPort] = [await freePort(), await freePort()];
  const proc = spawn(process.execPath, [join(ROOT, 'scripts/start.mjs')], {
    cwd: ROOT,
    env: {
      ...process.env,
      NATS_URL: natsUrl(),
      GATEWAY_HOST: '127.0.0.1',
      GATEWAY_PORT: String(httpPort),
      GATEWAY_GRPC_PORT: String(grpcPort),
      MNEMO_LOG_FORMAT: 'json',
      MNEMO_RESTART: 'none',
      ...(opts.only ? { MNEMO_START_ONLY: opts.only.join(',') } : {}),
      ...opts.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const metricsPorts = new Map<string, number>();
  const up = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`npm start not up after ${opts.timeoutMs ?? 120_000} ms:\n${out.slice(-4000)}`)),
      opts.timeoutMs ?? 120_000,
    );
    let partial = '';
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        const port = /"proc":"([\w-]+)".*"metricsPort":(\d+)/.exec(line);
        if (port) metricsPorts.set(port[1]!, Number(port[2]));
      }
      if (out.includes('Mnemo is up')) {
        clearTimeout(timer);
        resolve();
      }
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`npm start exited with ${code} before it was up:\n${out.slice(-4000)}`));
    });
  });
  const stop = () => stopProcess(proc);
  try {
    await up;
  } catch (e) {
    await stop();
    throw e;
  }
  return { baseUrl: `http://127.0.0.1:${httpPort}`, grpcPort, metricsPorts, log: () => out, stop };
}

/** Ctrl-C, as a user stops it: services first, then the script exits. */
async function stopProcess(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  proc.kill('SIGINT');
  const timer = setTimeout(() => proc.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(timer);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}
