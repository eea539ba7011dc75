import { Module } from '@nestjs/common';
import { RequestKvUseCase } from './request-kv.use-case.js';
import { RequestsController } from './requests.controller.js';

@Module({ controllers: [RequestsController], providers: [RequestKvUseCase] })
export class RequestsModule {}
