import { Module } from '@nestjs/common';
import { BatchingModule } from '../batching/batching.module.js';
import { AdmitInferenceUseCase } from './admit-inference.use-case.js';
import { CancelInferenceUseCase } from './cancel-inference.use-case.js';
import { InferenceNatsHandler } from './inference.nats-handler.js';

/** Admission and cancellation of dispatched requests. */
@Module({
  imports: [BatchingModule],
  providers: [AdmitInferenceUseCase, CancelInferenceUseCase, InferenceNatsHandler],
  exports: [InferenceNatsHandler],
})
export class InferenceModule {}
