import { Module } from '@nestjs/common';
import { NatsTokenSink } from './nats-token.sink.js';
import { BatchScheduler } from './batch.scheduler.js';
import { SwapManager } from './swap.manager.js';
import { SequenceStore } from './sequence.store.js';
import { TOKEN_SINK } from './token.sink.port.js';

/** The continuous-batching loop and the queue it serves. */
@Module({
  providers: [SequenceStore, SwapManager, BatchScheduler, { provide: TOKEN_SINK, useClass: NatsTokenSink }],
  exports: [SequenceStore, BatchScheduler],
})
export class BatchingModule {}
