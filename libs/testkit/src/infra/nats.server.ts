import { execFileSync } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:net';
import { freePort } from './free-port.js';
import { onProcessExit, privateDir, spawnServer, stopServer, type RunningServer } from './server.process.js';

/** A private nats-server: with credentials when started with them; `restart(downMs)` kills it and starts it again on the same port. */
export interface RunningNats extends RunningServer {
  user?: string;
  password?: string;
  restart: (downMs?: number) => Promise<void>;
  pid: () => number | undefined;
}

export interface NatsServerOptions {
  /** Parent of the private store directory. */
  dir?: string;
  log?: (line: string) => void;
  /** Clients must present this user and `password`. */
  user?: string;
  password?: string;
  /** A nats-server authorization block (natsUsers().conf) instead of one user. */
  authorization?: string;
  /** Server certificate and key (PEM files): clients must speak TLS. */
  tls?: { cert: string; key: string };
}

/**
 * Starts a private `nats-server` with JetStream on a free port of 127.0.0.1 (never the
 * shared 4222) and resolves once it accepts clients. Installs Debian's package when the
 * binary is missing and we may (root + apt); otherwise throws with the one-line fix.
 * With `user` and `password` the server refuses clients without them (the URL stays plain:
 * clients get the credentials separately, as NATS_USER / NATS_PASSWORD).
 * `restart(downMs)` kills the server (SIGKILL, as a crash), keeps it down `downMs`, and starts
 * it again on the same port and store: what a NATS restart under load looks like to clients.
 * `authorization`: a nats-server authorization block instead (per-service users and permissions,
 * nats.auth.ts natsUsers); `tls`: the server's certificate and key (PEM files): clients must then
 * speak TLS (tls.ca.ts makes a private CA and certificates).
 */
export async function startNats(opts: NatsServerOptions = {}): Promise<RunningNats> {
  const bin = ensureNatsServer(opts.log ?? ((l) => process.stderr.write(l + '\n')));
  let lastError: Error | undefined;
  // A port picked by freePort() can be taken before nats binds it; a new port fixes that.
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const dir = privateDir('nats', opts.dir);
    const args = ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir];
    const auth = opts.authorization
      ? opts.authorization
      : opts.user
        ? `authorization {\n  user: ${JSON.stringify(opts.user)}\n  password: ${JSON.stringify(opts.password ?? '')}\n}\n`
        : '';
    const tls = opts.tls ? `tls {\n  cert_file: ${JSON.stringify(opts.tls.cert)}\n  key_file: ${JSON.stringify(opts.tls.key)}\n}\n` : '';
    if (auth || tls) {
      // In a file only we can read, not on the command line, where every local user's `ps` would show it.
      const conf = join(dir, 'auth.conf');
      writeFileSync(conf, auth + tls, { mode: 0o600 });
      args.push('-c', conf);
    }
    let server = spawnServer(bin, args, { dir });
    const unhook = onProcessExit(() => {
      server.child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    });
    const up = await Promise.race([waitForNatsInfo(port, 10_000), server.exited.then(() => false)]);
    if (up) {
      let stopped = false;
      return {
        url: `nats://127.0.0.1:${port}`,
        port,
        dir,
        ...(opts.user ? { user: opts.user, password: opts.password ?? '' } : {}),
        pid: () => server.child.pid,
        restart: async (downMs = 0) => {
          if (stopped) throw new Error('nats-server was stopped');
          server.child.kill('SIGKILL');
          await server.exited;
          if (downMs > 0) await new Promise((r) => setTimeout(r, downMs));
          server = spawnServer(bin, args, { dir });
          const again = await Promise.race([waitForNatsInfo(port, 10_000), server.exited.then(() => false)]);
          if (!again) throw new Error(`nats-server did not come back on port ${port}:\n${server.tail.join('\n')}`);
        },
        stop: async () => {
          if (stopped) return;
          stopped = true;
          await stopServer(server, 'SIGTERM', 5000);
          unhook();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    }
    server.child.kill('SIGKILL');
    await server.exited;
    unhook();
    rmSync(dir, { recursive: true, force: true });
    lastError = new Error(`nats-server did not start on port ${port}:\n${server.tail.join('\n')}`);
  }
  throw lastError;
}

/** Path of nats-server, installing it with apt when possible. */
function ensureNatsServer(log: (line: string) => void): string {
  const found = which('nats-server');
  if (found) return found;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || !which('apt-get')) {
    throw new Error(
      'nats-server is not installed: run `sudo apt-get install -y nats-server` (Debian/Ubuntu) or put nats-server on PATH, or set NATS_URL',
    );
  }
  log('[infra] nats-server missing: installing Debian package nats-server…');
  const apt = (args: string[]) =>
    execFileSync('apt-get', args, { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  try {
    apt(['install', '-y', 'nats-server']);
  } catch {
    // The package lists may be absent (fresh container): refresh them once and retry.
    apt(['update']);
    apt(['install', '-y', 'nats-server']);
  }
  const installed = which('nats-server');
  if (!installed) throw new Error('apt-get installed nats-server but it is not on PATH');
  return installed;
}

function which(name: string): string | null {
  for (const d of (process.env.PATH ?? '').split(':').concat(['/usr/sbin', '/usr/bin', '/usr/local/bin'])) {
    const p = `${d}/${name}`;
    if (d && existsSync(p)) return p;
  }
  return null;
}

/** True once a TCP client on `port` receives nats-server's `INFO {...}` greeting. */
async function waitForNatsInfo(port: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect({ host: '127.0.0.1', port });
      const done = (v: boolean) => {
        s.destroy();
        resolve(v);
      };
      s.setTimeout(1000, () => done(false));
      s.once('error', () => done(false));
      s.once('data', (d) => done(d.toString('utf8').startsWith('INFO ')));
    });
    if (ok) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}
