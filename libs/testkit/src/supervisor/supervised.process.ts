// One service process under supervision: started, its output relayed line by line, and — when
// it exits on its own and restarts are on — started again after the restart policy's backoff.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { DEFAULT_RESTART_POLICY, restartDelay, type RestartPolicy } from './restart.policy.js';

export interface SupervisedOptions {
  readonly name: string;
  readonly args: string[];
  readonly env: Record<string, string | undefined>;
  readonly cwd: string;
  readonly restart?: boolean;
  readonly policy?: RestartPolicy;
  readonly onLine?: (line: string) => void;
  readonly onExit?: (info: { code: number | null; signal: string | null; restartInMs: number | null }) => void;
}

export class SupervisedProcess {
  readonly restarts: number[] = [];
  child: ChildProcess | undefined = undefined;
  /** Resolves when the current child has exited. */
  exited: Promise<void> = Promise.resolve();
  private stopped = false;
  private timer: NodeJS.Timeout | undefined = undefined;

  constructor(private readonly o: SupervisedOptions) {}

  start(): ChildProcess {
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
      const end = (code: number | null, signal: string | null): void => {
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
  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Stops for good (no restart): SIGTERM, SIGKILL after `graceMs`. */
  async stop(graceMs = 15_000): Promise<void> {
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
  killNow(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.running) this.child?.kill('SIGKILL');
  }
}
