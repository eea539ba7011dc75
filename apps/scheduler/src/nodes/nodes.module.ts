import { Module } from '@nestjs/common';
import { HeartbeatNatsHandler } from './heartbeat.nats-handler.js';
import { NodeRegistry } from './node.registry.js';
import { NodeSweeper } from './node.sweeper.js';
import { RecordHeartbeatUseCase } from './record-heartbeat.use-case.js';
import { SweepNodesUseCase } from './sweep-nodes.use-case.js';

/** Node registry: heartbeats in, expiry sweep, the live view routing reads. */
@Module({
  providers: [NodeRegistry, RecordHeartbeatUseCase, SweepNodesUseCase, NodeSweeper, HeartbeatNatsHandler],
  exports: [NodeRegistry],
})
export class NodesModule {}
