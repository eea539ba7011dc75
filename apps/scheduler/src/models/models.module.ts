import { Module } from '@nestjs/common';
import { NodesModule } from '../nodes/nodes.module.js';
import { ListModelsUseCase } from './list-models.use-case.js';
import { ModelsNatsHandler } from './models.nats-handler.js';

/** The cluster's model list, answered from the node registry. */
@Module({
  imports: [NodesModule],
  providers: [ListModelsUseCase, ModelsNatsHandler],
})
export class ModelsModule {}
