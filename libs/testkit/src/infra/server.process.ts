// Servers we start must not outlive us: each one is a child process in a private
// directory named `<kind>-<ownerPid>-<random>`. Normal ends stop them through `stop()`;
// a process exit kills what is left; a run that was SIGKILLed is swept by the next one.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

/** A private server started by this library; `stop()` ends it and removes `dir`. */
export interface RunningServer {
  url: string;
  port: number;
  dir: string;
  stop: () => Promise<void>;
}

const exitHooks = new Set<() => void>();
let hooked = false;

/**
 * Registers a synchronous last-resort cleanup (the 'exit' event allows nothing async).
 * Returns the function that unregisters it.
 */
export function onProcessExit(fn: () => void): () => void {
  if (!hooked) {
    hooked = true;
    process.on('exit', () => {
      for (const f of exitHooks) {
        try {
          f();
        } catch {
          // best effort: the process is going away
        }
      }
    });
  }
  exitHooks.add(fn);
  return () => exitHooks.delete(fn);
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Creates `<parent>/<kind>-<pid>-<random>` after removing siblings of the same kind
 * whose owner process is gone (and killing the server recorded in them).
 * `parent` defaults to `<os.tmpdir()>/mnemo-infra`.
 */
export function privateDir(kind: string, parent: string = join(tmpdir(), 'mnemo-infra')): string {
  mkdirSync(parent, { recursive: true });
  for (const name of readdirSync(parent)) {
    const m = new RegExp(`^${kind}-(\\d+)-[0-9a-f]+$`).exec(name);
    if (!m || isAlive(Number(m[1]))) continue;
    const dir = join(parent, name);
    try {
      const serverPid = Number(readFileSync(join(dir, 'server.pid'), 'utf8'));
      if (serverPid > 0 && isAlive(serverPid)) process.kill(serverPid, 'SIGKILL');
    } catch {
      // no pid file: the server never started
    }
    rmSync(dir, { recursive: true, force: true });
  }
  const dir = join(parent, `${kind}-${process.pid}-${randomBytes(4).toString('hex')}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** A spawned server: the process, the last lines it printed, and its end (the exit code, -1 for a signal or a failed spawn). */
export interface SpawnedServer {
  child: ChildProcess;
  tail: string[];
  exited: Promise<number>;
}

/**
 * Spawns a server process, remembers the last lines it printed (for error messages)
 * and records its pid in `dir/server.pid` for the stale-directory sweep.
 */
export function spawnServer(
  cmd: string,
  args: string[],
  opts: { dir: string; uid?: number; gid?: number; env?: NodeJS.ProcessEnv },
): SpawnedServer {
  const child = spawn(cmd, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    // Own process group: a terminal's Ctrl-C goes to our group only, so the owner decides
    // the order (services first, then the servers they use) instead of everything at once.
    detached: true,
    env: opts.env ?? process.env,
    ...(opts.uid !== undefined ? { uid: opts.uid, gid: opts.gid } : {}),
  });
  const tail: string[] = [];
  const keep = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) tail.push(line);
    if (tail.length > 30) tail.splice(0, tail.length - 30);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  if (child.pid) writeFileSync(join(opts.dir, 'server.pid'), String(child.pid));
  const exited = new Promise<number>((resolve) => {
    child.once('exit', (code) => resolve(code ?? -1));
    child.once('error', (e) => {
      tail.push(String(e));
      resolve(-1);
    });
  });
  return { child, tail, exited };
}

/** Sends `signal`, then SIGKILL if the server has not exited after `forceMs`; resolves once it has. */
export async function stopServer(server: SpawnedServer, signal: NodeJS.Signals, forceMs: number): Promise<void> {
  server.child.kill(signal);
  const force = setTimeout(() => server.child.kill('SIGKILL'), forceMs);
  await server.exited;
  clearTimeout(force);
}
