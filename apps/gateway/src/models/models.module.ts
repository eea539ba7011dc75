import { Module } from '@nestjs/common';
import { ListModelsUseCase } from './list-models.use-case.js';
import { ModelCatalog } from './model.catalog.js';
import { ModelsController } from './models.controller.js';
import { TokenizerRegistry } from './tokenizer.registry.js';

@Module({
  controllers: [ModelsController],
  providers: [ModelCatalog, TokenizerRegistry, ListModelsUseCase],
  exports: [ModelCatalog, TokenizerRegistry],
})
export class ModelsModule {}
