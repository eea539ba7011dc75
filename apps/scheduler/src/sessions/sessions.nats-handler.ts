import { encodeMessage, QueueGroups, SessionDeleteReplySchema, SessionReplySchema, SessionRequestSchema, Subjects } from '@mnemo/proto';
import { natsEntryPoints, resultOneof } from '@mnemo/service-kit';
import { advisoryInfo } from '../advisories/advisory.info.js';
import { DeleteSessionUseCase } from './delete-session.use-case.js';
import { GetSessionUseCase } from './get-session.use-case.js';
import { SessionCommand } from './session.command.js';

/** SESSION_GET / SESSION_DELETE (queue group `scheduler`) → the session use cases. */
export const SessionsNatsHandler = natsEntryPoints('SessionsNatsHandler', [GetSessionUseCase, DeleteSessionUseCase], (nats, get, del) => {
  const common = { request: SessionRequestSchema, queue: QueueGroups.SCHEDULER };
  nats.respond(Subjects.SESSION_GET, {
    ...common,
    operation: 'session.get',
    handle: (r) => get.execute(new SessionCommand(r.tenant, r.sessionId)),
    reply: (o) =>
      encodeMessage(SessionReplySchema, {
        result: resultOneof(o, 'session', ({ session, advisory }) => ({
          sessionId: session.sessionId,
          model: session.model,
          nodeId: session.nodeId,
          requests: session.requests,
          lastUsedUnixMs: session.lastUsedMs,
          chunks: session.chunkKeys.length,
          advisory: advisory ? advisoryInfo(advisory) : undefined,
        })),
      }),
  });
  nats.respond(Subjects.SESSION_DELETE, {
    ...common,
    operation: 'session.delete',
    handle: (r) => del.execute(new SessionCommand(r.tenant, r.sessionId)),
    reply: (o) => encodeMessage(SessionDeleteReplySchema, { result: resultOneof(o, 'deleted', (deleted) => deleted) }),
  });
});
