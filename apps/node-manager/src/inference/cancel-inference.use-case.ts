import { Inject, Injectable } from '@nestjs/common';
import { JsonLogger } from '@mnemo/service-kit';
import { BatchScheduler } from '../batching/batch.scheduler.js';
import type { CancelInferenceCommand } from './cancel-inference.command.js';

/** Frees a request's engine state at once; unknown ids (already finished) are a no-op. */
@Injectable()
export class CancelInferenceUseCase {
  constructor(
    @Inject(BatchScheduler) private readonly scheduler: BatchScheduler,
    @Inject(JsonLogger) private readonly logger: JsonLogger,
  ) {}

  execute({ requestId, reason }: CancelInferenceCommand): boolean {
    const found = this.scheduler.cancel(requestId, 'client');
    if (found) this.logger.emit('info', 'request cancelled', { requestId, reason });
    return found;
  }
}
