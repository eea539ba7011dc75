import { Module } from '@nestjs/common';
import { ListModelPairsUseCase } from './list-model-pairs.use-case.js';
import { ModelPairsNatsHandler } from './model-pairs.nats-handler.js';
import { RegisterModelPairUseCase } from './register-model-pair.use-case.js';

@Module({ providers: [RegisterModelPairUseCase, ListModelPairsUseCase, ModelPairsNatsHandler] })
export class ModelPairsModule {}
