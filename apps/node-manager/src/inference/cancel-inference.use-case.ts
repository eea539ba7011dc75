import { Inject, Injectable } from '@nestjs/common';
import { JsonLogger } from '@mnemo/service-kit';
import { BatchScheduler } from '../batching/batch.scheduler.js';
import { SequenceStore } from '../batching/sequence.store.js';
import type { CancelInferenceCommand } from './cancel-inference.command.js';
import { CancelledAttempts } from './cancelled-attempts.js';

/**
 * Frees a request's engine state at once. A cancel naming another attempt than the one held
 * here is ignored; one for a request not (yet) here is remembered, so a late admission of it
 * is refused. A silent cancel ends the sequence without a final event.
 */
@Injectable()
export class CancelInferenceUseCase {
  constructor(
    @Inject(BatchScheduler) private readonly scheduler: BatchScheduler,
    @Inject(SequenceStore) private readonly store: SequenceStore,
    @Inject(CancelledAttempts) private readonly cancelled: CancelledAttempts,
    @Inject(JsonLogger) private readonly logger: JsonLogger,
  ) {}

  execute({ requestId, reason, attempt, silent }: CancelInferenceCommand): boolean {
    const seq = this.store.get(requestId);
    if (!seq) {
      this.cancelled.remember(requestId, attempt);
      return false;
    }
    if (attempt !== 0 && seq.request.attempt !== attempt) return false;
    seq.silent ||= silent;
    this.scheduler.cancel(requestId, silent ? 'abandoned' : 'client');
    this.logger.emit('info', 'request cancelled', { requestId, attempt: seq.request.attempt, reason, silent });
    return true;
  }
}
