import { Module } from '@nestjs/common';
import { ListModelsUseCase } from './list-models.use-case.js';
import { ModelCatalog } from './model.catalog.js';
import { ModelsController } from './models.controller.js';
import { TokenizerCache } from './tokenizer.cache.js';

@Module({
  controllers: [ModelsController],
  providers: [ModelCatalog, TokenizerCache, ListModelsUseCase],
  exports: [ModelCatalog, TokenizerCache],
})
export class ModelsModule {}
