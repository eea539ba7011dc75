import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import {
  encodeMessage,
  ErrorReplySchema,
  ForgetReplySchema,
  ForgetRequestSchema,
  PrefetchReplySchema,
  PrefetchRequestSchema,
  Subjects,
} from '@mnemo/proto';
import { NatsResponders } from '@mnemo/service-kit';
import { NODE_CONFIG, type NodeManagerConfig } from '../config/node-manager.config.js';
import { ForgetPrefetchCommand, PrefetchCommand } from './prefetch.command.js';
import { ForgetPrefetchUseCase } from './forget-prefetch.use-case.js';
import { PrefetchUseCase } from './prefetch.use-case.js';

/**
 * nodePrefetch(NODE_ID) → PrefetchUseCase → PrefetchReply; nodeForget(NODE_ID) →
 * ForgetPrefetchUseCase → ForgetReply. A failure is answered with an ErrorReply instead (see
 * `decodeReplyOrError` in @mnemo/proto for how a caller tells them apart).
 */
@Injectable()
export class PrefetchNatsHandler implements OnApplicationBootstrap {
  constructor(
    @Inject(NatsResponders) private readonly nats: NatsResponders,
    @Inject(PrefetchUseCase) private readonly prefetch: PrefetchUseCase,
    @Inject(ForgetPrefetchUseCase) private readonly forget: ForgetPrefetchUseCase,
    @Inject(NODE_CONFIG) private readonly config: NodeManagerConfig,
  ) {}

  onApplicationBootstrap(): void {
    const id = this.config.NODE_ID;
    this.nats.respond(Subjects.nodePrefetch(id), {
      operation: 'prefetch',
      request: PrefetchRequestSchema,
      handle: (r) => this.prefetch.execute(new PrefetchCommand(r)),
      reply: (o) => ('ok' in o ? encodeMessage(PrefetchReplySchema, { chunksQueued: o.ok }) : encodeMessage(ErrorReplySchema, o.error)),
    });
    this.nats.respond(Subjects.nodeForget(id), {
      operation: 'forget',
      request: ForgetRequestSchema,
      handle: (r) => this.forget.execute(new ForgetPrefetchCommand(r)),
      reply: (o) => ('ok' in o ? encodeMessage(ForgetReplySchema, { freedChunks: o.ok }) : encodeMessage(ErrorReplySchema, o.error)),
    });
  }
}
