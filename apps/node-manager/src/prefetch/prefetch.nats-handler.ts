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
import { JsonLogger, NatsEndpoints, protoResponder, ServiceMetrics } from '@mnemo/service-kit';
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
    @Inject(NatsEndpoints) private readonly endpoints: NatsEndpoints,
    @Inject(PrefetchUseCase) private readonly prefetch: PrefetchUseCase,
    @Inject(ForgetPrefetchUseCase) private readonly forget: ForgetPrefetchUseCase,
    @Inject(NODE_CONFIG) private readonly config: NodeManagerConfig,
    @Inject(ServiceMetrics) private readonly metrics: ServiceMetrics,
    @Inject(JsonLogger) private readonly logger: JsonLogger,
  ) {}

  onApplicationBootstrap(): void {
    const id = this.config.NODE_ID;
    this.endpoints.listen(
      Subjects.nodePrefetch(id),
      protoResponder({
        operation: 'prefetch',
        request: PrefetchRequestSchema,
        handle: (r) => this.prefetch.execute(new PrefetchCommand(r)),
        reply: (o) => ('ok' in o ? encodeMessage(PrefetchReplySchema, { chunksQueued: o.ok }) : encodeMessage(ErrorReplySchema, o.error)),
        logger: this.logger,
        metrics: this.metrics,
      }),
    );
    this.endpoints.listen(
      Subjects.nodeForget(id),
      protoResponder({
        operation: 'forget',
        request: ForgetRequestSchema,
        handle: (r) => this.forget.execute(new ForgetPrefetchCommand(r)),
        reply: (o) => ('ok' in o ? encodeMessage(ForgetReplySchema, { freedChunks: o.ok }) : encodeMessage(ErrorReplySchema, o.error)),
        logger: this.logger,
        metrics: this.metrics,
      }),
    );
  }
}
