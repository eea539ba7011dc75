import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { SCHEDULER_CONFIG, type SchedulerConfig } from '../config/scheduler.config.js';
import { SweepNodesUseCase } from './sweep-nodes.use-case.js';

/**
 * Runs the sweep on a timer. The period is a sixth of the timeout (at most 500 ms), so a
 * dead node is gone within timeout + period.
 */
@Injectable()
export class NodeSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer?: NodeJS.Timeout;

  constructor(
    @Inject(SweepNodesUseCase) private readonly sweep: SweepNodesUseCase,
    @Inject(SCHEDULER_CONFIG) private readonly config: SchedulerConfig,
  ) {}

  onApplicationBootstrap(): void {
    const periodMs = Math.min(500, Math.max(20, Math.floor(this.config.SCHEDULER_NODE_TIMEOUT_MS! / 6)));
    this.timer = setInterval(() => this.sweep.execute(), periodMs);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }
}
