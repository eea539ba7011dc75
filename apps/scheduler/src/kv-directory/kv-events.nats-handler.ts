import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { decodeMessage, KvEventSchema, Subjects } from '@mnemo/proto';
import { NatsResponders } from '@mnemo/service-kit';
import { NodeRegistry } from '../nodes/node.registry.js';
import { RecordKvEventCommand } from './record-kv-event.command.js';
import { RecordKvEventUseCase } from './record-kv-event.use-case.js';

/**
 * KV_EVENTS → RecordKvEventUseCase (no queue group: every replica keeps its own directory), and
 * registry membership → reports for nodes that join, forgetting nodes that leave.
 */
@Injectable()
export class KvEventsNatsHandler implements OnApplicationBootstrap, OnModuleDestroy {
  private unwatch?: () => void;

  constructor(
    @Inject(NatsResponders) private readonly nats: NatsResponders,
    @Inject(RecordKvEventUseCase) private readonly useCase: RecordKvEventUseCase,
    @Inject(NodeRegistry) private readonly registry: NodeRegistry,
  ) {}

  onApplicationBootstrap(): void {
    this.unwatch = this.registry.onMembership((c) =>
      c.kind === 'joined' ? this.useCase.nodeJoined(c.nodeId) : this.useCase.nodeLeft(c.nodeId),
    );
    this.nats.consume(
      Subjects.KV_EVENTS,
      'KV event',
      (data) => decodeMessage(KvEventSchema, data),
      (event) => this.useCase.execute(new RecordKvEventCommand(event)),
    );
  }

  onModuleDestroy(): void {
    this.unwatch?.();
  }
}
