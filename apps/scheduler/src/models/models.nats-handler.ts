import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { encodeMessage, ListModelsReplySchema, QueueGroups, Subjects } from '@mnemo/proto';
import { NatsResponders } from '@mnemo/service-kit';
import { ListClusterModelsUseCase } from './list-cluster-models.use-case.js';

/** MODELS_LIST (queue group `scheduler`) → ListClusterModelsUseCase → ListModelsReply. The request body is empty. */
@Injectable()
export class ModelsNatsHandler implements OnApplicationBootstrap {
  constructor(
    @Inject(NatsResponders) private readonly nats: NatsResponders,
    @Inject(ListClusterModelsUseCase) private readonly useCase: ListClusterModelsUseCase,
  ) {}

  onApplicationBootstrap(): void {
    this.nats.listen(
      Subjects.MODELS_LIST,
      () => this.nats.metrics.time('models_list', async () => encodeMessage(ListModelsReplySchema, { models: this.useCase.execute() })),
      QueueGroups.SCHEDULER,
    );
  }
}
