import { Inject, Injectable } from '@nestjs/common';
import { SequenceStore } from '../batching/sequence.store.js';
import { NodeMetrics } from '../shared/node.metrics.js';
import type { FlowControlCommand } from './flow-control.command.js';

/**
 * Pauses a sequence whose client reads slowly (it keeps its KV but leaves decode iterations)
 * or resumes it. Unknown requests and other attempts are ignored: the message may be late.
 */
@Injectable()
export class FlowControlUseCase {
  constructor(
    @Inject(SequenceStore) private readonly store: SequenceStore,
    @Inject(NodeMetrics) private readonly metrics: NodeMetrics,
  ) {}

  execute({ requestId, attempt, pause }: FlowControlCommand): boolean {
    const seq = this.store.get(requestId);
    if (!seq || seq.request.attempt !== attempt || seq.paused === pause) return false;
    this.store.setPaused(requestId, pause);
    this.metrics.flowControl.inc({ action: pause ? 'pause' : 'resume' });
    return true;
  }
}
