import { decodeMessage, KvEventSchema, Subjects } from '@mnemo/proto';
import { natsEntryPoints } from '@mnemo/service-kit';
import { NodeRegistry } from '../nodes/node.registry.js';
import { RecordKvEventCommand } from './record-kv-event.command.js';
import { RecordKvEventUseCase } from './record-kv-event.use-case.js';

/**
 * KV_EVENTS → RecordKvEventUseCase (no queue group: every replica keeps its own directory), and
 * registry membership → reports for nodes that join, forgetting nodes that leave.
 */
export const KvEventsNatsHandler = natsEntryPoints(
  'KvEventsNatsHandler',
  [RecordKvEventUseCase, NodeRegistry],
  (nats, useCase, registry) => {
    const unwatch = registry.onMembership((c) => (c.kind === 'joined' ? useCase.nodeJoined(c.nodeId) : useCase.nodeLeft(c.nodeId)));
    nats.consume(
      Subjects.KV_EVENTS,
      'KV event',
      (data) => decodeMessage(KvEventSchema, data),
      (event) => useCase.execute(new RecordKvEventCommand(event)),
    );
    return unwatch;
  },
);
