import { Module } from '@nestjs/common';
import { AdvisoryArrivals } from './advisory.arrivals.js';
import { AdvisoryRegistry } from './advisory.registry.js';
import { ForgetPrefetchUseCase } from './forget-prefetch.use-case.js';
import { PrefetchNatsHandler } from './prefetch.nats-handler.js';
import { PrefetchUseCase } from './prefetch.use-case.js';

/** Advisory prefetch and its withdrawal (Symphony on the node). */
@Module({
  providers: [AdvisoryRegistry, AdvisoryArrivals, PrefetchUseCase, ForgetPrefetchUseCase, PrefetchNatsHandler],
  exports: [PrefetchUseCase, AdvisoryArrivals],
})
export class PrefetchModule {}
