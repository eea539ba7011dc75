import { create, type MessageInitShape } from '@bufbuild/protobuf';
import type { NatsConnection } from '@nats-io/transport-node';
import { ErrorCode } from '@mnemo/kv-core';
import { FinishReason, NodeDownSchema, TokenEventSchema, type TokenEvent } from '@mnemo/proto';
import { JsonLogger, ServiceMetrics } from '@mnemo/service-kit';
import type { AttemptRef, NodeClient } from '../nats/node.client.js';
import { NodeDownListener } from '../nats/node-down.listener.js';
import type { Placement, SchedulerClient, TokenInbox } from '../nats/scheduler.client.js';
import { InferTimer } from './infer.metrics.js';
import { InferWatch, type Continuation } from './infer.watch.js';

/** The NATS side as a port double: the test plays the inbox and the scheduler, and records what goes to nodes. */
class Wire implements Pick<SchedulerClient, 'openInbox'>, Pick<NodeClient, 'cancel' | 'flow'> {
  deliver: (e: TokenEvent) => void = () => undefined;
  readonly sent: string[] = [];
  readonly redispatched: Array<{ plan: Continuation; lastAttempt: number; place: (p: Placement) => void; fail: (e: unknown) => void }> = [];
  openInbox(onEvent: (e: TokenEvent) => void): TokenInbox {
    this.deliver = onEvent;
    return { subject: '_INBOX.test', close: () => undefined };
  }
  cancel(to: AttemptRef, reason: string, silent = false): void {
    this.sent.push(`cancel ${to.nodeId}#${to.attempt} ${reason}${silent ? ' silent' : ''}`);
  }
  flow(to: AttemptRef, pause: boolean): void {
    this.sent.push(`${pause ? 'pause' : 'resume'} ${to.nodeId}#${to.attempt}`);
  }
  redispatch = (plan: Continuation, lastAttempt: number): Promise<Placement> =>
    new Promise((place, fail) => this.redispatched.push({ plan, lastAttempt, place, fail }));
}

type EventInit = Exclude<MessageInitShape<typeof TokenEventSchema>, TokenEvent>;
const ev = (nodeId: string, attempt: number, seq: number, tokens: number[], extra: EventInit = {}): TokenEvent =>
  create(TokenEventSchema, { requestId: 'r', nodeId, attempt, seq, tokens, ...extra });
const down = (nodeId: string, bootId = '') => create(NodeDownSchema, { nodeId, bootId, reason: 'timeout' });
const tick = () => new Promise((r) => setImmediate(r));

const PROMPT = [1, 2, 3];

function setup(maxFailovers = 2, maxTokens = 6) {
  const wire = new Wire();
  const logger = new JsonLogger('test', 'error', () => undefined);
  // The real listener; only its NATS subscription is left out (announcements are fed to it directly).
  const downs = new NodeDownListener({} as NatsConnection, logger);
  const outcomes: string[] = [];
  const gaps: number[] = [];
  const timer = new InferTimer(new ServiceMetrics('gateway-test'), 'completions');
  const sut = new InferWatch(
    wire,
    wire,
    logger.child({}),
    timer,
    'r',
    new AbortController().signal,
    { idleTimeoutMs: 60_000, stallTimeoutMs: 60_000, bufferEvents: 64 },
    undefined,
    {
      downs,
      redispatch: wire.redispatch,
      prompt: PROMPT,
      maxTokens,
      maxFailovers,
      metrics: { counted: (o) => outcomes.push(o), gap: (s) => gaps.push(s) },
    },
  );
  return { sut, wire, downs, outcomes, gaps };
}

describe(`${InferWatch.name} failover`, () => {
  it('moves the request when its node goes down: prompt + streamed tokens, draw offset, one uninterrupted stream', async () => {
    const { sut, wire, downs, outcomes, gaps } = setup();
    sut.admitted({ nodeId: 'a', attempt: 1, bootId: 'a1' }, Date.now() + 60_000);
    wire.deliver(ev('a', 1, 0, [65], { usage: { promptTokens: 3, completionTokens: 1, cachedTokens: 2 } }));
    wire.deliver(ev('a', 1, 1, [66]));
    downs.announced(down('a', 'a1'));
    expect(wire.sent).toEqual(['cancel a#1 failover silent']);
    expect(wire.redispatched).toEqual([
      expect.objectContaining({ plan: { kind: 'continue', tokens: [1, 2, 3, 65, 66], drawOffset: 2, maxTokens: 4 }, lastAttempt: 1 }),
    ]);
    // A repeat from another scheduler replica, and a late token of the lost attempt: neither counts.
    downs.announced(down('a', 'a1'));
    wire.deliver(ev('a', 1, 2, [99]));
    wire.deliver(ev('b', 2, 0, [67], { usage: { promptTokens: 5, completionTokens: 1, cachedTokens: 4 } }));
    wire.redispatched[0].place({ nodeId: 'b', attempt: 2, bootId: 'b1' });
    await tick();
    wire.deliver(ev('b', 2, 1, [68]));
    wire.deliver(
      ev('b', 2, 2, [], { done: true, finishReason: FinishReason.STOP, usage: { promptTokens: 5, completionTokens: 3, cachedTokens: 4 } }),
    );
    const got: TokenEvent[] = [];
    while (sut.queue.size > 0) got.push(await sut.queue.next());
    expect(got.map((e) => [e.seq, ...e.tokens])).toEqual([[0, 65], [1, 66], [2, 67], [3, 68], [4]]);
    expect(got.at(-1)!.usage).toMatchObject({ promptTokens: 3, completionTokens: 5, cachedTokens: 2 });
    expect(outcomes).toEqual(['continued']);
    expect(gaps).toHaveLength(1);
    sut.release();
  });

  it('continues from the tokens streamed when events of its attempt were lost in transit (a gap), and drops a repeat', async () => {
    const { sut, wire, outcomes } = setup();
    sut.admitted({ nodeId: 'a', attempt: 1, bootId: 'a1' }, Date.now() + 60_000);
    wire.deliver(ev('a', 1, 0, [65]));
    wire.deliver(ev('a', 1, 0, [65])); // a redelivery
    wire.deliver(ev('a', 1, 1, [66]));
    wire.deliver(ev('a', 1, 3, [68])); // seq 2 was lost while NATS restarted
    expect(wire.sent).toEqual(['cancel a#1 failover silent']);
    expect(wire.redispatched).toEqual([
      expect.objectContaining({ plan: { kind: 'continue', tokens: [1, 2, 3, 65, 66], drawOffset: 2, maxTokens: 4 }, lastAttempt: 1 }),
    ]);
    wire.deliver(ev('a', 1, 4, [69])); // the lost attempt, still streaming: dropped
    wire.redispatched[0].place({ nodeId: 'a', attempt: 2, bootId: 'a1' });
    await tick();
    wire.deliver(ev('a', 2, 0, [67]));
    wire.deliver(ev('a', 2, 1, [68], { done: true, finishReason: FinishReason.STOP }));
    const got: TokenEvent[] = [];
    while (sut.queue.size > 0) got.push(await sut.queue.next());
    expect(got.map((e) => [e.seq, ...e.tokens])).toEqual([
      [0, 65],
      [1, 66],
      [2, 67],
      [3, 68],
    ]);
    expect(outcomes).toEqual(['continued']);
    sut.release();
  });

  it('fails with data_loss at a gap once the failovers allowed are used', async () => {
    const { sut, wire, outcomes } = setup(0);
    sut.admitted({ nodeId: 'a', attempt: 1 }, Date.now() + 60_000);
    wire.deliver(ev('a', 1, 0, [65]));
    wire.deliver(ev('a', 1, 2, [67]));
    await sut.queue.next();
    await expect(sut.queue.next()).rejects.toMatchObject({ code: ErrorCode.DataLoss });
    expect(outcomes).toEqual(['exhausted']);
  });

  it('ignores an announcement of another incarnation of its node', () => {
    const { sut, wire, downs } = setup();
    sut.admitted({ nodeId: 'a', attempt: 1, bootId: 'a2' }, Date.now() + 60_000);
    downs.announced(down('a', 'a1'));
    expect(wire.redispatched).toEqual([]);
    sut.release();
  });

  it('moves at once a request placed on an incarnation announced down before the placement arrived', async () => {
    const { sut, wire, downs } = setup();
    downs.announced(down('a', 'a1'));
    sut.admitted({ nodeId: 'a', attempt: 1, bootId: 'a1' }, Date.now() + 60_000);
    await tick();
    expect(wire.redispatched).toEqual([
      expect.objectContaining({ plan: { kind: 'continue', tokens: PROMPT, drawOffset: 0, maxTokens: 6 } }),
    ]);
    sut.release();
  });

  it('takes a continuation placed back on a node announced down before it was asked for (only slow, beating again) as alive', async () => {
    const { sut, wire, downs, outcomes } = setup();
    sut.admitted({ nodeId: 'a', attempt: 1, bootId: 'a1' }, Date.now() + 60_000);
    downs.announced(down('a', 'a1'));
    wire.redispatched[0].place({ nodeId: 'a', attempt: 2, bootId: 'a1' });
    await tick();
    expect(outcomes).toEqual(['continued']);
    wire.deliver(ev('a', 2, 0, [65]));
    expect(sut.queue.size).toBe(1);
    sut.release();
  });

  it('fails clearly once the failovers allowed are used, and cancels nothing more', async () => {
    const { sut, wire, downs, outcomes } = setup(1);
    sut.admitted({ nodeId: 'a', attempt: 1 }, Date.now() + 60_000);
    downs.announced(down('a'));
    wire.redispatched[0].place({ nodeId: 'b', attempt: 2 });
    await tick();
    downs.announced(down('b'));
    await expect(sut.queue.next()).rejects.toMatchObject({ code: ErrorCode.NoNodeAvailable });
    expect(outcomes).toEqual(['continued', 'exhausted']);
    expect(wire.redispatched).toHaveLength(1);
  });

  it('passes a re-dispatch error on to the client', async () => {
    const { sut, wire, downs, outcomes } = setup();
    sut.admitted({ nodeId: 'a', attempt: 1 }, Date.now() + 60_000);
    downs.announced(down('a'));
    wire.redispatched[0].fail(Object.assign(new Error('no node'), { code: ErrorCode.NoNodeAvailable }));
    await expect(sut.queue.next()).rejects.toMatchObject({ code: ErrorCode.NoNodeAvailable });
    expect(outcomes).toEqual(['continued', 'failed']);
  });

  it('cancels a continuation placed after the client left', async () => {
    const { sut, wire, downs } = setup();
    sut.admitted({ nodeId: 'a', attempt: 1 }, Date.now() + 60_000);
    downs.announced(down('a'));
    sut.release('client_disconnected');
    wire.redispatched[0].place({ nodeId: 'b', attempt: 2 });
    await tick();
    expect(wire.sent).toEqual(['cancel a#1 failover silent', 'cancel a#1 client_disconnected', 'cancel b#2 client_disconnected']);
  });
});
