import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { NODE_CONFIG, type NodeManagerConfig } from '../config/node-manager.config.js';
import { PublishHeartbeatUseCase } from './publish-heartbeat.use-case.js';

/** Beats every NODE_HEARTBEAT_MS, starting at once so the node is routable as soon as it is up. */
@Injectable()
export class HeartbeatTimer implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer?: NodeJS.Timeout;

  constructor(
    @Inject(PublishHeartbeatUseCase) private readonly publish: PublishHeartbeatUseCase,
    @Inject(NODE_CONFIG) private readonly config: NodeManagerConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.publish.execute();
    this.timer = setInterval(() => this.publish.execute(), this.config.NODE_HEARTBEAT_MS!);
    this.timer.unref();
  }

  /** Stops beating; a crashed node simply goes silent and is expired by the schedulers. */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  onApplicationShutdown(): void {
    this.stop();
  }
}
