import { Module } from '@nestjs/common';
import { NodesModule } from '../nodes/nodes.module.js';
import { ListClusterModelsUseCase } from './list-cluster-models.use-case.js';
import { ModelsNatsHandler } from './models.nats-handler.js';

/** The cluster's model list, answered from the node registry. */
@Module({
  imports: [NodesModule],
  providers: [ListClusterModelsUseCase, ModelsNatsHandler],
})
export class ModelsModule {}
