import { Module } from '@nestjs/common';
import { RepeatingTask } from '@mnemo/service-kit';
import { SCHEDULER_CONFIG, type SchedulerConfig } from '../config/scheduler.config.js';
import { HeartbeatNatsHandler } from './heartbeat.nats-handler.js';
import { NodeDownNatsPublisher } from './node-down.nats-publisher.js';
import { NodeRegistry } from './node.registry.js';
import { RecordHeartbeatUseCase } from './record-heartbeat.use-case.js';
import { SweepNodesUseCase } from './sweep-nodes.use-case.js';

/** Injection token of the timer that runs the sweep. */
export const NODE_SWEEP_TASK = Symbol('NODE_SWEEP_TASK');

/**
 * The sweep runs every sixth of the node timeout (20–500 ms), so a dead node is gone within
 * timeout + period.
 */
const sweepTask = {
  provide: NODE_SWEEP_TASK,
  inject: [SweepNodesUseCase, SCHEDULER_CONFIG],
  useFactory: (sweep: SweepNodesUseCase, config: SchedulerConfig) =>
    new RepeatingTask(() => sweep.execute(), Math.min(500, Math.max(20, Math.floor(config.SCHEDULER_NODE_TIMEOUT_MS! / 6)))),
};

/** Node registry: heartbeats in, expiry sweep, the live view routing reads, NODE_DOWN out. */
@Module({
  providers: [NodeRegistry, RecordHeartbeatUseCase, SweepNodesUseCase, sweepTask, HeartbeatNatsHandler, NodeDownNatsPublisher],
  exports: [NodeRegistry],
})
export class NodesModule {}
