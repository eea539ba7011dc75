import { Module } from '@nestjs/common';
import { ModelsModule } from '../models/models.module.js';
import { CompletionEndpoint } from './completion.endpoint.js';
import { CompletionResponder } from './completion.responder.js';
import { CompletionsController } from './completions.controller.js';
import { InferGrpcController } from './infer.grpc.controller.js';
import { InferMetrics } from './infer.metrics.js';
import { InferUseCase } from './infer.use-case.js';

@Module({
  imports: [ModelsModule],
  controllers: [CompletionsController],
  providers: [InferUseCase, InferMetrics, CompletionResponder, CompletionEndpoint, InferGrpcController],
  exports: [InferGrpcController],
})
export class CompletionsModule {}
