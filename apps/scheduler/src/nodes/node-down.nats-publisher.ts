import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { encodeMessage, NodeDownSchema, Subjects } from '@mnemo/proto';
import { JsonLogger, NATS_CONNECTION } from '@mnemo/service-kit';
import { DOWN_REASONS, NodeRegistry } from './node.registry.js';

/**
 * Announces every node incarnation that died (see `DOWN_REASONS`) on NODE_DOWN, so gateways move
 * the requests it ran or queued to other nodes at once instead of waiting out their idle timeout.
 * Fire-and-forget: every replica publishes, so one lost message is covered by another replica's
 * (or, with a single replica, by the gateway's idle timeout).
 */
@Injectable()
export class NodeDownNatsPublisher implements OnApplicationBootstrap, OnModuleDestroy {
  private unwatch?: () => void;

  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(NodeRegistry) private readonly registry: NodeRegistry,
    @Inject(JsonLogger) private readonly logger: JsonLogger,
  ) {}

  onApplicationBootstrap(): void {
    this.unwatch = this.registry.onMembership((c) => {
      if (c.kind !== 'left' || !DOWN_REASONS.has(c.reason) || this.nc.isClosed()) return;
      this.nc.publish(Subjects.NODE_DOWN, encodeMessage(NodeDownSchema, { nodeId: c.nodeId, bootId: c.bootId, reason: c.reason }));
      this.logger.emit('info', 'node announced down', { nodeId: c.nodeId, bootId: c.bootId, reason: c.reason });
    });
  }

  onModuleDestroy(): void {
    this.unwatch?.();
  }
}
