import { Module } from '@nestjs/common';
import { ListAvailableModelsUseCase } from './list-available-models.use-case.js';
import { ClusterModelCache } from './cluster-model.cache.js';
import { ModelsController } from './models.controller.js';
import { TokenizerCache } from './tokenizer.cache.js';

@Module({
  controllers: [ModelsController],
  providers: [ClusterModelCache, TokenizerCache, ListAvailableModelsUseCase],
  exports: [ClusterModelCache, TokenizerCache],
})
export class ModelsModule {}
