import { create } from '@bufbuild/protobuf';
import { SimEngine } from '@mnemo/engine';
import { FinishReason, InferenceRequestSchema } from '@mnemo/proto';
import { JsonLogger, ServiceMetrics, type Clock } from '@mnemo/service-kit';
import { BatchScheduler } from '../batching/batch.scheduler.js';
import { Sequence } from '../shared/sequence.js';
import { SequenceStore } from '../batching/sequence.store.js';
import type { TokenEventInit, TokenSink } from '../batching/token.sink.port.js';
import type { NodeManagerConfig } from '../config/node-manager.config.js';
import { NodeMetrics } from '../shared/node.metrics.js';
import { CancelInferenceCommand } from './cancel-inference.command.js';
import { CancelInferenceUseCase } from './cancel-inference.use-case.js';
import { CANCEL_MEMORY_ENTRIES, CANCEL_MEMORY_MS, CancelledAttempts } from './cancelled-attempts.js';

/** The sink contract: silent sequences publish nothing (NatsTokenSink does the same on NATS). */
class Inbox implements TokenSink {
  readonly events: TokenEventInit[] = [];
  emit(seq: Sequence, event: TokenEventInit): void {
    if (!seq.silent) this.events.push(event);
  }
}

function setup() {
  const clock = {
    mono: 0,
    monotonicMs() {
      return this.mono;
    },
    unixMs: () => 1_700_000_000_000,
  } satisfies Clock & { mono: number };
  const engine = new SimEngine({
    cost: { prefillBaseMs: 0, prefillPerTokenMs: 0, decodeBaseMs: 0, decodePerSeqMs: 0, decodePerKContextMs: 0 },
  });
  const store = new SequenceStore();
  const inbox = new Inbox();
  const metrics = new ServiceMetrics('node-test');
  const config = { NODE_ID: 'n1', NODE_MAX_BATCH: 8, NODE_MAX_PREFILL_TOKENS: 8192 } as NodeManagerConfig;
  const logger = new JsonLogger('test', 'error', () => undefined);
  const scheduler = new BatchScheduler(store, engine, inbox, config, clock, new NodeMetrics(metrics), metrics, logger);
  const cancelled = new CancelledAttempts(clock);
  const sut = new CancelInferenceUseCase(scheduler, store, cancelled, logger);
  const add = (attempt: number) => {
    const request = create(InferenceRequestSchema, {
      requestId: 'r1',
      attempt,
      model: 'mnemo-tiny',
      tokens: [104, 105],
      replySubject: '_INBOX.1',
      sampling: { maxTokens: 50 },
    });
    store.add(new Sequence(request, engine.models()[0]!, store.arrivalSeq(), 0));
  };
  return { sut, store, inbox, cancelled, clock, add };
}

describe(CancelInferenceUseCase.name, () => {
  it('stops the request and tells its inbox (client gone)', () => {
    const { sut, store, inbox, add } = setup();
    add(1);
    expect(sut.execute(new CancelInferenceCommand('r1', 'client_disconnected'))).toBe(true);
    expect(store.size).toBe(0);
    expect(inbox.events).toEqual([expect.objectContaining({ done: true, finishReason: FinishReason.CANCELLED })]);
  });

  it.each([
    ['ends an abandoned attempt silently: nothing reaches the inbox another attempt uses', 1, true, 0],
    ['leaves another attempt of the same request alone', 2, false, 1],
  ])('%s', (_name, runningAttempt, stopped, left) => {
    const { sut, store, inbox, add } = setup();
    add(runningAttempt);
    expect(sut.execute(new CancelInferenceCommand('r1', 'dispatch_timeout', 1, true))).toBe(stopped);
    expect(store.size).toBe(left);
    expect(inbox.events).toEqual([]);
  });

  it('remembers a cancel that overtook its admission', () => {
    const { sut, cancelled } = setup();
    expect(sut.execute(new CancelInferenceCommand('r1', 'dispatch_timeout', 1, true))).toBe(false);
    expect(cancelled.has('r1', 1)).toBe(true);
    expect(cancelled.has('r1', 2)).toBe(false);
  });
});

describe(CancelledAttempts.name, () => {
  it('remembers a cancel for a while, per attempt, with attempt 0 standing for all', () => {
    const { cancelled, clock } = setup();
    cancelled.remember('a', 2);
    cancelled.remember('b', 0);
    expect([cancelled.has('a', 2), cancelled.has('a', 1), cancelled.has('b', 7)]).toEqual([true, false, true]);
    clock.mono += CANCEL_MEMORY_MS + 1;
    expect([cancelled.has('a', 2), cancelled.has('b', 7)]).toEqual([false, false]);
  });

  it('forgets the oldest first when full', () => {
    const { cancelled } = setup();
    for (let i = 0; i <= CANCEL_MEMORY_ENTRIES; i++) cancelled.remember(`r${i}`, 1);
    expect(cancelled.size).toBe(CANCEL_MEMORY_ENTRIES);
    expect(cancelled.has('r0', 1)).toBe(false);
    expect(cancelled.has(`r${CANCEL_MEMORY_ENTRIES}`, 1)).toBe(true);
  });
});
