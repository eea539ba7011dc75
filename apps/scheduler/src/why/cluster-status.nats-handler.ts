import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { ClusterStatusReplySchema, ClusterStatusRequestSchema, encodeMessage, QueueGroups, Subjects } from '@mnemo/proto';
import { JsonLogger, NatsEndpoints, protoResponder } from '@mnemo/service-kit';
import { ClusterStatusUseCase } from './cluster-status.use-case.js';

/** STATUS (queue group `scheduler`) → ClusterStatusUseCase. */
@Injectable()
export class ClusterStatusNatsHandler implements OnApplicationBootstrap {
  constructor(
    @Inject(NatsEndpoints) private readonly endpoints: NatsEndpoints,
    @Inject(ClusterStatusUseCase) private readonly useCase: ClusterStatusUseCase,
    @Inject(JsonLogger) private readonly logger: JsonLogger,
  ) {}

  onApplicationBootstrap(): void {
    this.endpoints.listen(
      Subjects.STATUS,
      protoResponder({
        operation: 'status',
        request: ClusterStatusRequestSchema,
        handle: () => this.useCase.execute(),
        reply: (o) => ('ok' in o ? encodeMessage(ClusterStatusReplySchema, o.ok) : encodeMessage(ClusterStatusReplySchema, {})),
        logger: this.logger,
      }),
      QueueGroups.SCHEDULER,
    );
  }
}
