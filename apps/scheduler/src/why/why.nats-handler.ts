import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { encodeMessage, Subjects, WhyReplySchema, WhyRequestSchema } from '@mnemo/proto';
import { decodeRequest, JsonLogger, NatsEndpoints, toErrorReply } from '@mnemo/service-kit';
import { WhyUseCase } from './why.use-case.js';

/**
 * WHY, in the `scheduler` queue group: one replica answers, and since every replica keeps every
 * routing record (WhyRecordShare) the answer is the same whichever. An id nobody routed, or one
 * whose record aged out, is answered not_found at once (no fan-out, no wait for a timeout).
 */
@Injectable()
export class WhyNatsHandler implements OnApplicationBootstrap {
  constructor(
    @Inject(NatsEndpoints) private readonly endpoints: NatsEndpoints,
    @Inject(WhyUseCase) private readonly useCase: WhyUseCase,
    @Inject(JsonLogger) private readonly logger: JsonLogger,
  ) {}

  onApplicationBootstrap(): void {
    this.endpoints.listen(
      Subjects.WHY,
      async (msg) => {
        try {
          const o = await this.useCase.execute(decodeRequest(WhyRequestSchema, msg.data));
          if (o.kind === 'not_found')
            return encodeMessage(WhyReplySchema, { result: { case: 'error', value: { code: 'not_found', message: 'no such request' } } });
          return encodeMessage(WhyReplySchema, { result: { case: 'explanation', value: o.explanation } });
        } catch (e) {
          return encodeMessage(WhyReplySchema, { result: { case: 'error', value: toErrorReply(e, this.logger, 'why') } });
        }
      },
      'scheduler',
    );
  }
}
