import {
  encodeMessage,
  ErrorReplySchema,
  ForgetReplySchema,
  ForgetRequestSchema,
  PrefetchReplySchema,
  PrefetchRequestSchema,
  Subjects,
} from '@mnemo/proto';
import { natsEntryPoints } from '@mnemo/service-kit';
import { NODE_CONFIG, type NodeManagerConfig } from '../config/node-manager.config.js';
import { ForgetPrefetchCommand, PrefetchCommand } from './prefetch.command.js';
import { ForgetPrefetchUseCase } from './forget-prefetch.use-case.js';
import { PrefetchUseCase } from './prefetch.use-case.js';

/**
 * nodePrefetch(NODE_ID) → PrefetchUseCase → PrefetchReply; nodeForget(NODE_ID) →
 * ForgetPrefetchUseCase → ForgetReply. A failure is answered with an ErrorReply instead (see
 * `decodeReplyOrError` in @mnemo/proto for how a caller tells them apart).
 */
export const PrefetchNatsHandler = natsEntryPoints(
  'PrefetchNatsHandler',
  [PrefetchUseCase, ForgetPrefetchUseCase, NODE_CONFIG],
  (nats, prefetch, forget, config: NodeManagerConfig) => {
    const id = config.NODE_ID;
    nats.respond(Subjects.nodePrefetch(id), {
      operation: 'prefetch',
      request: PrefetchRequestSchema,
      handle: (r) => prefetch.execute(new PrefetchCommand(r)),
      reply: (o) => ('ok' in o ? encodeMessage(PrefetchReplySchema, { chunksQueued: o.ok }) : encodeMessage(ErrorReplySchema, o.error)),
    });
    nats.respond(Subjects.nodeForget(id), {
      operation: 'forget',
      request: ForgetRequestSchema,
      handle: (r) => forget.execute(new ForgetPrefetchCommand(r)),
      reply: (o) => ('ok' in o ? encodeMessage(ForgetReplySchema, { freedChunks: o.ok }) : encodeMessage(ErrorReplySchema, o.error)),
    });
  },
);
