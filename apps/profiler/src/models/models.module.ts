import { Module } from '@nestjs/common';
import { ListModelsUseCase } from './list-models.use-case.js';
import { ModelsNatsHandler } from './models.nats-handler.js';
import { RegisterModelUseCase } from './register-model.use-case.js';

@Module({ providers: [RegisterModelUseCase, ListModelsUseCase, ModelsNatsHandler] })
export class ModelsModule {}
