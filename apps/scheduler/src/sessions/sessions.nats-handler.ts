import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { encodeMessage, QueueGroups, SessionDeleteReplySchema, SessionReplySchema, SessionRequestSchema, Subjects } from '@mnemo/proto';
import { NatsResponders } from '@mnemo/service-kit';
import { advisoryInfo } from '../advisories/advisory.info.js';
import { DeleteSessionUseCase } from './delete-session.use-case.js';
import { GetSessionUseCase } from './get-session.use-case.js';
import { SessionCommand } from './session.command.js';

/** SESSION_GET / SESSION_DELETE (queue group `scheduler`) → the session use cases. */
@Injectable()
export class SessionsNatsHandler implements OnApplicationBootstrap {
  constructor(
    @Inject(NatsResponders) private readonly nats: NatsResponders,
    @Inject(GetSessionUseCase) private readonly get: GetSessionUseCase,
    @Inject(DeleteSessionUseCase) private readonly del: DeleteSessionUseCase,
  ) {}

  onApplicationBootstrap(): void {
    const common = { request: SessionRequestSchema, queue: QueueGroups.SCHEDULER };
    this.nats.respond(Subjects.SESSION_GET, {
      ...common,
      operation: 'session.get',
      handle: (r) => this.get.execute(new SessionCommand(r.tenant, r.sessionId)),
      reply: (o) =>
        encodeMessage(
          SessionReplySchema,
          'ok' in o
            ? {
                result: {
                  case: 'session',
                  value: {
                    sessionId: o.ok.session.sessionId,
                    model: o.ok.session.model,
                    nodeId: o.ok.session.nodeId,
                    requests: o.ok.session.requests,
                    lastUsedUnixMs: o.ok.session.lastUsedMs,
                    chunks: o.ok.session.chunkKeys.length,
                    advisory: o.ok.advisory ? advisoryInfo(o.ok.advisory) : undefined,
                  },
                },
              }
            : { result: { case: 'error', value: o.error } },
        ),
    });
    this.nats.respond(Subjects.SESSION_DELETE, {
      ...common,
      operation: 'session.delete',
      handle: (r) => this.del.execute(new SessionCommand(r.tenant, r.sessionId)),
      reply: (o) =>
        encodeMessage(
          SessionDeleteReplySchema,
          'ok' in o ? { result: { case: 'deleted', value: o.ok } } : { result: { case: 'error', value: o.error } },
        ),
    });
  }
}
