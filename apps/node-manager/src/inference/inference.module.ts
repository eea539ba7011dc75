import { Module } from '@nestjs/common';
import { BatchingModule } from '../batching/batching.module.js';
import { ElasticModule } from '../elastic/elastic.module.js';
import { PrefetchModule } from '../prefetch/prefetch.module.js';
import { AdmitInferenceUseCase } from './admit-inference.use-case.js';
import { CancelInferenceUseCase } from './cancel-inference.use-case.js';
import { CancelledAttempts } from './cancelled-attempts.js';
import { FlowControlUseCase } from './flow-control.use-case.js';
import { InferenceNatsHandler } from './inference.nats-handler.js';

/** Admission, cancellation and backpressure of dispatched requests. */
@Module({
  imports: [BatchingModule, ElasticModule, PrefetchModule],
  providers: [CancelledAttempts, AdmitInferenceUseCase, CancelInferenceUseCase, FlowControlUseCase, InferenceNatsHandler],
})
export class InferenceModule {}
