import { create } from '@bufbuild/protobuf';
import { SimEngine } from '@mnemo/engine';
import { InferenceRequestSchema } from '@mnemo/proto';
import { JsonLogger, ServiceMetrics, type Clock } from '@mnemo/service-kit';
import { BatchScheduler } from '../batching/batch.scheduler.js';
import { Sequence } from '../shared/sequence.js';
import { SequenceStore } from '../batching/sequence.store.js';
import type { TokenEventInit, TokenSink } from '../batching/token.sink.port.js';
import type { NodeManagerConfig } from '../config/node-manager.config.js';
import { NodeMetrics } from '../shared/node.metrics.js';
import { FlowControlCommand } from './flow-control.command.js';
import { FlowControlUseCase } from './flow-control.use-case.js';

class Inbox implements TokenSink {
  readonly events: Array<TokenEventInit & { requestId?: string }> = [];
  emit(_seq: Sequence, event: TokenEventInit): void {
    this.events.push(event);
  }
  count(requestId: string): number {
    return this.events.filter((e) => e.requestId === requestId).length;
  }
}

function setup() {
  const clock: Clock = { monotonicMs: () => 0, unixMs: () => 1_700_000_000_000 };
  const engine = new SimEngine({
    cost: { prefillBaseMs: 0, prefillPerTokenMs: 0, decodeBaseMs: 0, decodePerSeqMs: 0, decodePerKContextMs: 0 },
  });
  const store = new SequenceStore();
  const inbox = new Inbox();
  const metrics = new ServiceMetrics('node-test');
  const nodeMetrics = new NodeMetrics(metrics);
  const config = { NODE_ID: 'n1', NODE_MAX_BATCH: 8, NODE_MAX_PREFILL_TOKENS: 8192 } as NodeManagerConfig;
  const scheduler = new BatchScheduler(
    store,
    engine,
    inbox,
    config,
    clock,
    nodeMetrics,
    metrics,
    new JsonLogger('test', 'error', () => undefined),
  );
  const sut = new FlowControlUseCase(store, nodeMetrics);
  const add = (requestId: string, attempt = 1) => {
    const request = create(InferenceRequestSchema, {
      requestId,
      attempt,
      model: 'mnemo-tiny',
      tokens: [104, 105],
      replySubject: `_INBOX.${requestId}`,
      sampling: { maxTokens: 100 },
    });
    store.add(new Sequence(request, engine.models()[0]!, store.arrivalSeq(), 0));
  };
  return { sut, store, inbox, scheduler, engine, add, metrics };
}

describe(FlowControlUseCase.name, () => {
  it('leaves a paused sequence out of decode iterations, keeps it, and resumes it', async () => {
    const { sut, store, inbox, scheduler, engine, add } = setup();
    add('slow');
    add('fast');
    await scheduler.runIteration(); // both prefilled
    expect(sut.execute(new FlowControlCommand('slow', 1, true))).toBe(true);
    for (let i = 0; i < 5; i++) await scheduler.runIteration();
    expect(inbox.count('slow')).toBe(1);
    expect(inbox.count('fast')).toBe(6);
    expect(store.get('slow')?.phase).toBe('running');
    expect(engine.activeSequences).toBe(2); // its KV is still held
    expect(sut.execute(new FlowControlCommand('slow', 1, false))).toBe(true);
    await scheduler.runIteration();
    expect(inbox.count('slow')).toBe(2);
  });

  it('ignores unknown requests, other attempts and repeats', () => {
    const { sut, add } = setup();
    add('r', 2);
    expect(sut.execute(new FlowControlCommand('nope', 1, true))).toBe(false);
    expect(sut.execute(new FlowControlCommand('r', 1, true))).toBe(false);
    expect(sut.execute(new FlowControlCommand('r', 2, true))).toBe(true);
    expect(sut.execute(new FlowControlCommand('r', 2, true))).toBe(false);
  });

  it('lets the loop sleep while only paused sequences are held, and wakes it on resume', async () => {
    const { sut, store, add } = setup();
    add('r');
    sut.execute(new FlowControlCommand('r', 1, true));
    expect(store.hasRunnable()).toBe(false);
    let woke = false;
    const waiting = store.whenWork().then(() => (woke = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(woke).toBe(false);
    sut.execute(new FlowControlCommand('r', 1, false));
    await waiting;
    expect(woke).toBe(true);
  });
});
