import { Module } from '@nestjs/common';
import { RepeatingTask } from '@mnemo/service-kit';
import { BatchingModule } from '../batching/batching.module.js';
import { ChunksModule } from '../chunks/chunks.module.js';
import { NODE_CONFIG, type NodeManagerConfig } from '../config/node-manager.config.js';
import { FinishBeatTrigger } from './finish-beat.trigger.js';
import { PublishHeartbeatUseCase } from './publish-heartbeat.use-case.js';

/** Injection token of the heartbeat timer (stopped first on shutdown, before the goodbye beat). */
export const HEARTBEAT_TASK = Symbol('HEARTBEAT_TASK');

/** Beats every NODE_HEARTBEAT_MS, starting at once so the node is routable as soon as it is up. */
const heartbeatTask = {
  provide: HEARTBEAT_TASK,
  inject: [PublishHeartbeatUseCase, NODE_CONFIG],
  useFactory: (publish: PublishHeartbeatUseCase, config: NodeManagerConfig) =>
    new RepeatingTask(() => publish.execute(), config.NODE_HEARTBEAT_MS!, true),
};

/** Registration and load reports towards the schedulers: every NODE_HEARTBEAT_MS, and soon after a request leaves. */
@Module({
  imports: [BatchingModule, ChunksModule],
  providers: [PublishHeartbeatUseCase, heartbeatTask, FinishBeatTrigger],
  exports: [PublishHeartbeatUseCase, HEARTBEAT_TASK],
})
export class HeartbeatModule {}
