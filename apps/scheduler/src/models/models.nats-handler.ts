import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { encodeMessage, ListModelsReplySchema, QueueGroups, Subjects } from '@mnemo/proto';
import { NatsEndpoints, ServiceMetrics } from '@mnemo/service-kit';
import { ListClusterModelsUseCase } from './list-cluster-models.use-case.js';

/** MODELS_LIST (queue group `scheduler`) → ListClusterModelsUseCase → ListModelsReply. The request body is empty. */
@Injectable()
export class ModelsNatsHandler implements OnApplicationBootstrap {
  constructor(
    @Inject(NatsEndpoints) private readonly endpoints: NatsEndpoints,
    @Inject(ListClusterModelsUseCase) private readonly useCase: ListClusterModelsUseCase,
    @Inject(ServiceMetrics) private readonly metrics: ServiceMetrics,
  ) {}

  onApplicationBootstrap(): void {
    this.endpoints.listen(
      Subjects.MODELS_LIST,
      () => this.metrics.time('models_list', async () => encodeMessage(ListModelsReplySchema, { models: this.useCase.execute() })),
      QueueGroups.SCHEDULER,
    );
  }
}
