import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';

/**
 * Runs `run` every `periodMs` from application bootstrap until shutdown or `stop` — heartbeats,
 * registry sweeps. Apps provide it with a factory (`useFactory: (...) => new RepeatingTask(…)`);
 * Nest calls the hooks on factory-made instances too. The timer is unref'd: it never keeps a
 * process alive on its own.
 */
export class RepeatingTask implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly run: () => void,
    readonly periodMs: number,
    /** Run once at start as well (a heartbeat makes the node routable without waiting a period). */
    private readonly runAtStart = false,
  ) {
    if (!(periodMs > 0)) throw new RangeError(`periodMs must be > 0, got ${periodMs}`);
  }

  onApplicationBootstrap(): void {
    this.start();
  }

  start(): void {
    if (this.timer) return;
    if (this.runAtStart) this.run();
    this.timer = setInterval(this.run, this.periodMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  onApplicationShutdown(): void {
    this.stop();
  }
}
