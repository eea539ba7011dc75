import { Inject, Injectable } from '@nestjs/common';
import { expiredNodes } from '@mnemo/kv-core';
import { CLOCK, JsonLogger, type Clock } from '@mnemo/service-kit';
import { SCHEDULER_CONFIG, type SchedulerConfig } from '../config/scheduler.config.js';
import { SchedulerMetrics } from '../shared/scheduler.metrics.js';
import { NodeRegistry } from './node.registry.js';

/** Drops nodes whose last heartbeat is older than SCHEDULER_NODE_TIMEOUT_MS; returns their ids. */
@Injectable()
export class SweepNodesUseCase {
  constructor(
    @Inject(NodeRegistry) private readonly registry: NodeRegistry,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(SCHEDULER_CONFIG) private readonly config: SchedulerConfig,
    @Inject(SchedulerMetrics) private readonly metrics: SchedulerMetrics,
    @Inject(JsonLogger) private readonly logger: JsonLogger,
  ) {}

  execute(): string[] {
    const timeoutMs = this.config.SCHEDULER_NODE_TIMEOUT_MS!;
    const dropped = expiredNodes(this.registry.all(), this.clock.monotonicMs(), timeoutMs);
    for (const nodeId of dropped) {
      this.registry.remove(nodeId, 'timeout');
      this.metrics.nodesDropped.inc({ reason: 'timeout' });
      this.logger.emit('warn', 'node dropped: no heartbeat', { nodeId, timeoutMs });
    }
    return dropped;
  }
}
