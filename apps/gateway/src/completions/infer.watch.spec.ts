import { create, type MessageInitShape } from '@bufbuild/protobuf';
import { ErrorCode } from '@mnemo/kv-core';
import { FinishReason, TokenEventSchema, type TokenEvent } from '@mnemo/proto';
import { JsonLogger, ServiceMetrics } from '@mnemo/service-kit';
import type { AttemptRef, NodeClient } from '../nats/node.client.js';
import type { SchedulerClient, TokenInbox } from '../nats/scheduler.client.js';
import { InferTimer } from './infer.metrics.js';
import { InferWatch, type WatchLimits } from './infer.watch.js';

/** The NATS side as a port double: the test plays the inbox and records what goes to nodes. */
class Wire implements Pick<SchedulerClient, 'openInbox'>, Pick<NodeClient, 'cancel' | 'flow'> {
  deliver: (e: TokenEvent) => void = () => undefined;
  closed = false;
  readonly sent: string[] = [];
  openInbox(onEvent: (e: TokenEvent) => void): TokenInbox {
    this.deliver = onEvent;
    return { subject: '_INBOX.test', close: () => (this.closed = true) };
  }
  cancel(to: AttemptRef, reason: string, silent = false): void {
    this.sent.push(`cancel ${to.nodeId}#${to.attempt} ${reason}${silent ? ' silent' : ''}`);
  }
  flow(to: AttemptRef, pause: boolean): void {
    this.sent.push(`${pause ? 'pause' : 'resume'} ${to.nodeId}#${to.attempt}`);
  }
}

type EventInit = Exclude<MessageInitShape<typeof TokenEventSchema>, TokenEvent>;

const ev = (nodeId: string, attempt: number, seq: number, extra: EventInit = {}): TokenEvent =>
  create(TokenEventSchema, { requestId: 'r', nodeId, attempt, seq, tokens: [65], ...extra });

function setup(limits: Partial<WatchLimits> = {}) {
  const wire = new Wire();
  const ac = new AbortController();
  const timer = new InferTimer(new ServiceMetrics('gateway-test'), 'chat.completions');
  const log = new JsonLogger('test', 'error', () => undefined).child({});
  const sut = new InferWatch(wire, wire, log, timer, 'r', ac.signal, {
    idleTimeoutMs: 60_000,
    stallTimeoutMs: 60_000,
    bufferEvents: 16,
    ...limits,
  });
  const taken: TokenEvent[] = [];
  const take = async (n: number) => {
    for (let i = 0; i < n; i++) taken.push(await sut.queue.next());
  };
  return { sut, wire, ac, taken, take };
}

describe(InferWatch.name, () => {
  it('late-admit race: streams the placed attempt only, and silently cancels the one that admitted late', async () => {
    const { sut, wire, take, taken } = setup();
    wire.deliver(ev('a', 1, 0)); // node a admitted after the scheduler's dispatch timeout
    wire.deliver(ev('b', 2, 0));
    sut.admitted({ nodeId: 'b', attempt: 2 }, Date.now() + 60_000);
    wire.deliver(ev('a', 1, 1, { done: true, finishReason: FinishReason.CANCELLED, error: { code: 'cancelled', message: 'x' } }));
    wire.deliver(ev('b', 2, 1, { done: true, finishReason: FinishReason.LENGTH }));
    await take(2);
    expect(taken.map((e) => `${e.nodeId}#${e.attempt}:${e.seq}`)).toEqual(['b#2:0', 'b#2:1']);
    expect(sut.queue.size).toBe(0);
    expect(wire.sent).toEqual(['cancel a#1 superseded silent']);
    sut.release();
  });

  it('cancels a stray attempt heard after the placement, once', () => {
    const { sut, wire } = setup();
    sut.admitted({ nodeId: 'b', attempt: 2 }, Date.now() + 60_000);
    wire.deliver(ev('a', 1, 0));
    wire.deliver(ev('a', 1, 1));
    expect(wire.sent).toEqual(['cancel a#1 superseded silent']);
    expect(sut.queue.size).toBe(0);
    sut.release();
  });

  it('pauses the node when a quarter of the buffer is full and resumes it once the client caught up', async () => {
    const { sut, wire, take } = setup({ bufferEvents: 32 });
    sut.admitted({ nodeId: 'n', attempt: 1 }, Date.now() + 60_000);
    for (let i = 0; i < 8; i++) wire.deliver(ev('n', 1, i));
    expect(wire.sent).toEqual(['pause n#1']);
    await take(5);
    expect(wire.sent).toEqual(['pause n#1']);
    await take(1);
    expect(wire.sent).toEqual(['pause n#1', 'resume n#1']);
    sut.release();
  });

  it('gives a client up that stays stalled: the node is cancelled and the transport told to cut it', async () => {
    const { sut, wire } = setup({ bufferEvents: 16, stallTimeoutMs: 30 });
    sut.admitted({ nodeId: 'n', attempt: 1 }, Date.now() + 60_000);
    for (let i = 0; i < 8; i++) wire.deliver(ev('n', 1, i));
    await new Promise<void>((resolve) => sut.stalled.addEventListener('abort', () => resolve()));
    expect(wire.sent).toEqual(['pause n#1', 'cancel n#1 client_stalled']);
    expect(wire.closed).toBe(true);
    for (let i = 0; i < 8; i++) await sut.queue.next();
    await expect(sut.queue.next()).rejects.toMatchObject({ code: ErrorCode.Timeout });
  });

  it('gives up when a node ignores the pause and the buffer fills', async () => {
    const { sut, wire } = setup({ bufferEvents: 8 });
    sut.admitted({ nodeId: 'n', attempt: 1 }, Date.now() + 60_000);
    for (let i = 0; i < 20; i++) wire.deliver(ev('n', 1, i));
    expect(sut.queue.size).toBe(8);
    expect(sut.stalled.aborted).toBe(true);
    expect(wire.sent).toEqual(['pause n#1', 'cancel n#1 client_stalled']);
  });

  it('flow-controls the attempt that may be placed before the scheduler replies, and keeps it paused until drained', async () => {
    const { sut, wire, take } = setup({ bufferEvents: 32 });
    for (let i = 0; i < 9; i++) wire.deliver(ev('n', 2, i));
    expect(wire.sent).toEqual(['pause n#2']);
    sut.admitted({ nodeId: 'n', attempt: 2 }, Date.now() + 60_000);
    expect(sut.queue.size).toBe(9);
    await take(7);
    expect(wire.sent).toEqual(['pause n#2', 'resume n#2']);
    sut.release();
  });

  it('counts buffered events in the gauge until they are taken or the request ends', async () => {
    let gauge = 0;
    const wire = new Wire();
    const timer = new InferTimer(new ServiceMetrics('gateway-test'), 'chat.completions');
    const log = new JsonLogger('test', 'error', () => undefined).child({});
    const sut = new InferWatch(
      wire,
      wire,
      log,
      timer,
      'r',
      new AbortController().signal,
      { idleTimeoutMs: 60_000, stallTimeoutMs: 60_000, bufferEvents: 16 },
      {
        inc: (n = 1) => void (gauge += n),
        dec: (n = 1) => void (gauge -= n),
      },
    );
    sut.admitted({ nodeId: 'n', attempt: 1 }, Date.now() + 60_000);
    const first = sut.queue.next(); // a waiting consumer takes the first event directly
    for (let i = 0; i < 5; i++) wire.deliver(ev('n', 1, i));
    await first;
    expect(gauge).toBe(4);
    await sut.queue.next();
    expect(gauge).toBe(3);
    sut.release();
    expect(gauge).toBe(0);
    await sut.queue.next();
    expect(gauge).toBe(0);
  });

  it('cancels the placed attempt when the client leaves', () => {
    const { sut, wire, ac } = setup();
    sut.admitted({ nodeId: 'n', attempt: 3 }, Date.now() + 60_000);
    ac.abort();
    expect(wire.sent).toEqual(['cancel n#3 client_disconnected']);
    expect(wire.closed).toBe(true);
  });
});
