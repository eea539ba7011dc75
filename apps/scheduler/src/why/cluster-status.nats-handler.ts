import { ClusterStatusReplySchema, ClusterStatusRequestSchema, encodeMessage, QueueGroups, Subjects } from '@mnemo/proto';
import { natsEntryPoints } from '@mnemo/service-kit';
import { ClusterStatusUseCase } from './cluster-status.use-case.js';

/** STATUS (queue group `scheduler`) → ClusterStatusUseCase. Not timed: an operator's poll, not traffic. */
export const ClusterStatusNatsHandler = natsEntryPoints('ClusterStatusNatsHandler', [ClusterStatusUseCase], (nats, useCase) => {
  nats.respond(Subjects.STATUS, {
    operation: 'status',
    request: ClusterStatusRequestSchema,
    handle: () => useCase.execute(),
    reply: (o) => ('ok' in o ? encodeMessage(ClusterStatusReplySchema, o.ok) : encodeMessage(ClusterStatusReplySchema, {})),
    timed: false,
    queue: QueueGroups.SCHEDULER,
  });
});
