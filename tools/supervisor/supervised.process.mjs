// One service process under supervision: started, its output relayed line by line, and — when
// it exits on its own and restarts are on — started again after the restart policy's backoff.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { DEFAULT_RESTART_POLICY, restartDelay } from './restart.policy.mjs';

/**
 * @typedef {{
 *   name: string, args: string[], env: Record<string, string | undefined>, cwd: string,
 *   restart?: boolean, policy?: import('./restart.policy.mjs').RestartPolicy,
 *   onLine?: (line: string) => void,
 *   onExit?: (info: { code: number | null, signal: string | null, restartInMs: number | null }) => void,
 * }} SupervisedOptions
 */

export class SupervisedProcess {
  /** @param {SupervisedOptions} o */
  constructor(o) {
    this.o = o;
    /** @type {number[]} */
    this.restarts = [];
    this.stopped = false;
    /** @type {import('node:child_process').ChildProcess | undefined} */
    this.child = undefined;
    /** @type {Promise<void>} resolves when the current child has exited */
    this.exited = Promise.resolve();
    /** @type {NodeJS.Timeout | undefined} */
    this.timer = undefined;
  }

  start() {
    // Own process group: Ctrl-C reaches only the supervisor, which chooses the order.
    const child = spawn(process.execPath, this.o.args, {
      cwd: this.o.cwd,
      env: this.o.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    this.child = child;
    this.exited = new Promise((resolve) => {
      let done = false;
      /** @param {number | null} code @param {string | null} signal */
      const end = (code, signal) => {
        if (done) return;
        done = true;
        resolve();
        const restartInMs =
          this.stopped || !this.o.restart ? null : restartDelay(this.restarts, Date.now(), this.o.policy ?? DEFAULT_RESTART_POLICY);
        this.o.onExit?.({ code, signal, restartInMs });
        if (restartInMs === null) return;
        this.timer = setTimeout(() => {
          this.timer = undefined;
          if (this.stopped) return;
          this.restarts.push(Date.now());
          this.start();
        }, restartInMs);
      };
      child.once('exit', end);
      child.once('error', () => end(-1, null));
    });
    for (const stream of [child.stdout, child.stderr]) if (stream) createInterface({ input: stream }).on('line', (l) => this.o.onLine?.(l));
    return child;
  }

  /** Whether a child is running now. */
  get running() {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Stops for good (no restart): SIGTERM, SIGKILL after `graceMs`. */
  async stop(graceMs = 15_000) {
    this.stopped = true;
    clearTimeout(this.timer);
    const c = this.child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    c.kill('SIGTERM');
    const force = setTimeout(() => c.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(force);
  }

  /** Last-resort synchronous kill (process 'exit' hook). */
  killNow() {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.running) this.child?.kill('SIGKILL');
  }
}
