import { Module } from '@nestjs/common';
import { RequestKvUseCase } from './request-kv.use-case.js';
import { ClusterController } from './cluster.controller.js';
import { RequestsController } from './requests.controller.js';

@Module({ controllers: [RequestsController, ClusterController], providers: [RequestKvUseCase] })
export class RequestsModule {}
