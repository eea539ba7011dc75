import { Module } from '@nestjs/common';
import { BatchingModule } from '../batching/batching.module.js';
import { ChunksModule } from '../chunks/chunks.module.js';
import { HeartbeatTimer } from './heartbeat.timer.js';
import { PublishHeartbeatUseCase } from './publish-heartbeat.use-case.js';

/** Registration and load reports towards the schedulers. */
@Module({
  imports: [BatchingModule, ChunksModule],
  providers: [PublishHeartbeatUseCase, HeartbeatTimer],
  exports: [PublishHeartbeatUseCase, HeartbeatTimer],
})
export class HeartbeatModule {}
