import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { CLOCK, type Clock } from '@mnemo/service-kit';
import { SequenceStore } from '../batching/sequence.store.js';
import { NODE_CONFIG, type NodeManagerConfig } from '../config/node-manager.config.js';
import { PublishHeartbeatUseCase } from './publish-heartbeat.use-case.js';

/**
 * A heartbeat when a request leaves the node, at most one per NODE_FINISH_BEAT_MS. A scheduler
 * counts every request it dispatches as queued on the node until the node's next heartbeat;
 * with only the periodic beat (NODE_HEARTBEAT_MS), a conversation's next turn, sent the moment
 * the last one ended, finds its node looking busy by every turn of the last period and is
 * moved away from its KV. The beat goes out as the request leaves the store, before its final
 * token event, so it reaches the schedulers ahead of any follow-up; a removal inside the
 * period is covered by one beat at the period's end.
 */
@Injectable()
export class FinishBeatTrigger implements OnModuleInit, OnApplicationShutdown {
  private lastMs = -Infinity;
  private timer?: NodeJS.Timeout;

  constructor(
    @Inject(PublishHeartbeatUseCase) private readonly publish: PublishHeartbeatUseCase,
    @Inject(SequenceStore) private readonly store: SequenceStore,
    @Inject(NODE_CONFIG) private readonly config: NodeManagerConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    if (this.config.NODE_FINISH_BEAT_MS! > 0) this.store.onRemoved(() => this.trigger());
  }

  private trigger(): void {
    if (this.timer) return;
    const wait = this.lastMs + this.config.NODE_FINISH_BEAT_MS! - this.clock.monotonicMs();
    if (wait <= 0) return this.beat();
    this.timer = setTimeout(() => this.beat(), wait);
    this.timer.unref();
  }

  private beat(): void {
    this.timer = undefined;
    this.lastMs = this.clock.monotonicMs();
    this.publish.execute();
  }

  onApplicationShutdown(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
