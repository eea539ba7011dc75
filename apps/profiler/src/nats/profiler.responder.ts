import type { DescMessage, MessageInitShape, MessageShape } from '@bufbuild/protobuf';
import { encodeMessage, ProfilerReplySchema, QueueGroups } from '@mnemo/proto';
import { ErrorCode, MnemoError } from '@mnemo/kv-core';
import type { NatsResponders } from '@mnemo/service-kit';
import { DATABASE_UNREACHABLE_MESSAGE, isDatabaseUnreachable } from '../database/pg-error.codes.js';

export type ProfilerResult = MessageInitShape<typeof ProfilerReplySchema>['result'];

/**
 * The profiler's reply envelope on the shared responders: every PROFILER_* request is answered
 * with one ProfilerReply (the result, or `error` with a domain code), in the `profiler` queue
 * group so each request reaches exactly one replica.
 */
export function serveProfilerRequest<D extends DescMessage>(
  nats: NatsResponders,
  subject: string,
  schema: D,
  handle: (req: MessageShape<D>) => Promise<ProfilerResult>,
): void {
  nats.respond(subject, {
    operation: subject.replace(/^mnemo\.v1\.profiler\./, ''),
    request: schema,
    // An unreachable database is the caller's to retry, not an internal error.
    handle: async (req) => {
      try {
        return await handle(req);
      } catch (e) {
        if (isDatabaseUnreachable(e)) throw new MnemoError(ErrorCode.Unavailable, DATABASE_UNREACHABLE_MESSAGE);
        throw e;
      }
    },
    reply: (o) => encodeMessage(ProfilerReplySchema, { result: 'ok' in o ? o.ok : { case: 'error', value: o.error } }),
    queue: QueueGroups.PROFILER,
  });
}
