import { Module } from '@nestjs/common';
import { ListModelRecordsUseCase } from './list-model-records.use-case.js';
import { ModelsNatsHandler } from './models.nats-handler.js';
import { RegisterModelUseCase } from './register-model.use-case.js';

@Module({ providers: [RegisterModelUseCase, ListModelRecordsUseCase, ModelsNatsHandler] })
export class ModelsModule {}
