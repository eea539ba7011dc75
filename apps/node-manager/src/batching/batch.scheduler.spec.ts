import { create } from '@bufbuild/protobuf';
import { ErrorCode } from '@mnemo/kv-core';
import { ByteTokenizer, SimEngine, type SimEngineOptions, type SimStep } from '@mnemo/engine';
import { FinishReason, InferenceRequestSchema, SamplingParamsSchema, type InferenceRequest } from '@mnemo/proto';
import { ManualClock, ServiceMetrics } from '@mnemo/service-kit';
import type { NodeManagerConfig } from '../config/node-manager.config.js';
import { NodeMetrics } from '../shared/node.metrics.js';
import { BatchScheduler } from './batch.scheduler.js';
import { Sequence } from '../shared/sequence.js';
import { SequenceStore } from './sequence.store.js';
import type { TokenEventInit, TokenSink } from './token.sink.port.js';
import { batchSchedulerOf } from '../../test/batch-scheduler.fixture.js';

const tok = new ByteTokenizer();
const zeroCost = { prefillBaseMs: 0, prefillPerTokenMs: 0, decodeBaseMs: 0, decodePerSeqMs: 0, decodePerKContextMs: 0 };

/** Records what would go to each inbox. */
class InboxRecorder implements TokenSink {
  readonly events: Array<TokenEventInit & { subject: string }> = [];
  emit(seq: Sequence, event: TokenEventInit): void {
    this.events.push({ subject: seq.request.replySubject, ...event });
  }
  of(requestId: string) {
    return this.events.filter((e) => e.requestId === requestId);
  }
}

function setup(opts: { maxBatch?: number; engine?: SimEngineOptions; prefixCache?: 'on' | 'off'; holdLong?: 'on' | 'off' } = {}) {
  const steps: SimStep[] = [];
  const engine = new SimEngine({ cost: zeroCost, ...opts.engine, onStep: (s) => steps.push(s) });
  const store = new SequenceStore();
  const sink = new InboxRecorder();
  const clock = new ManualClock();
  const metrics = new ServiceMetrics('node-test');
  const nodeMetrics = new NodeMetrics(metrics);
  const config = {
    NODE_ID: 'n1',
    NODE_MAX_BATCH: opts.maxBatch ?? 8,
    NODE_MAX_PREFILL_TOKENS: 8192,
    NODE_PREFIX_CACHE: opts.prefixCache ?? 'on',
    NODE_HOLD_LONG_PROMPTS: opts.holdLong ?? 'off',
  } as NodeManagerConfig;
  const sut = batchSchedulerOf({ store, engine, sink, config, clock, metrics, nodeMetrics });
  const add = (over: Partial<Omit<InferenceRequest, '$typeName' | '$unknown'>> & { maxTokens?: number; stop?: number[] } = {}) => {
    const { maxTokens, stop, ...rest } = over;
    const request = create(InferenceRequestSchema, {
      requestId: `r${store.size}`,
      model: 'mnemo-tiny',
      tokens: tok.encode('hello'),
      replySubject: `_INBOX.${rest.requestId ?? `r${store.size}`}`,
      sampling: { temperature: 1, topP: 1, maxTokens: maxTokens ?? 4, seed: 7n, stopTokenIds: stop ?? [] },
      ...rest,
    });
    store.add(new Sequence(request, engine.models()[0], store.arrivalSeq(), clock.monotonicMs()));
    return request.requestId;
  };
  const runAll = async () => {
    for (let i = 0; i < 10_000 && (await sut.runIteration()); i++);
  };
  return { sut, engine, store, sink, clock, steps, add, runAll, nodeMetrics, metrics };
}

describe(BatchScheduler.name, () => {
  it('streams one event per token in seq order and ends at max_tokens with usage', async () => {
    const { sink, add, runAll, engine } = setup();
    const id = add({ maxTokens: 5 });
    await runAll();
    const events = sink.of(id);
    expect(events.map((e) => e.seq)).toEqual([0, 1, 2, 3, 4]);
    expect(events.every((e) => e.subject === `_INBOX.${id}` && e.tokens?.length === 1)).toBe(true);
    expect(events.slice(0, 4).every((e) => !e.done)).toBe(true);
    expect(events[4]).toMatchObject({ done: true, finishReason: FinishReason.LENGTH, usage: { promptTokens: 5, completionTokens: 5 } });
    expect(engine.activeSequences).toBe(0);
  });

  it('gives the same tokens as the engine alone would (seeded, batching does not change them)', async () => {
    const a = setup();
    const b = setup();
    const id = a.add({ maxTokens: 6 });
    b.add({ requestId: 'other', maxTokens: 3, tokens: tok.encode('xyz') });
    b.add({ requestId: id, maxTokens: 6 });
    await a.runAll();
    await b.runAll();
    const tokens = (r: ReturnType<typeof setup>) => r.sink.of(id).flatMap((e) => e.tokens ?? []);
    expect(tokens(b)).toEqual(tokens(a));
  });

  it("observes each request's wait in the queue from admission to its first prefill", async () => {
    const { add, runAll, clock, nodeMetrics } = setup({ maxBatch: 1 });
    add({ maxTokens: 1 });
    clock.mono += 250;
    await runAll();
    const { values } = await nodeMetrics.queueWait.get();
    const at = (name: string, le?: number) => values.find((v) => v.metricName === name && (le === undefined || v.labels.le === le))?.value;
    expect(at('mnemo_node_queue_seconds_count')).toBe(1);
    expect(at('mnemo_node_queue_seconds_sum')).toBeCloseTo(0.25);
    expect(at('mnemo_node_queue_seconds_bucket', 0.1)).toBe(0);
    expect(at('mnemo_node_queue_seconds_bucket', 0.25)).toBe(1);
  });

  it('batches concurrent requests into one prefill and shared decode steps', async () => {
    const { add, runAll, steps, nodeMetrics } = setup();
    add({ maxTokens: 3 });
    add({ maxTokens: 3 });
    await runAll();
    expect(steps.map((s) => [s.kind, s.seqIds.length])).toEqual([
      ['prefill', 2],
      ['decode', 2],
      ['decode', 2],
    ]);
    expect((await nodeMetrics.batchedIterations.get()).values[0].value).toBe(3);
  });

  it('lets a request join a running batch between iterations (continuous batching)', async () => {
    const { sut, add, steps, runAll } = setup();
    add({ requestId: 'long', maxTokens: 6 });
    await sut.runIteration();
    await sut.runIteration();
    add({ requestId: 'late', maxTokens: 2 });
    await runAll();
    expect(steps.map((s) => `${s.kind}:${s.seqIds.join('+')}`)).toEqual([
      'prefill:long',
      'decode:long',
      'prefill:late',
      'decode:long',
      'decode:long+late',
      'decode:long',
      'decode:long',
    ]);
  });

  it.each([
    ['on', ['prefill:s1+s2', 'prefill:long']],
    ['off', ['prefill:s1+long+s2']],
  ])('NODE_HOLD_LONG_PROMPTS=%s: a long prompt queued between short ones prefills %s', async (holdLong, prefills) => {
    const { add, runAll, steps } = setup({ holdLong: holdLong as 'on' | 'off' });
    const prompt = (n: number) => Array.from({ length: n }, (_, i) => 1 + (i % 50));
    add({ requestId: 's1', tokens: prompt(40), maxTokens: 1 });
    add({ requestId: 'long', tokens: prompt(400), maxTokens: 1 });
    add({ requestId: 's2', tokens: prompt(30), maxTokens: 1 });
    await runAll();
    expect(steps.filter((s) => s.kind === 'prefill').map((s) => `prefill:${s.seqIds.join('+')}`)).toEqual(prefills);
  });

  it('never runs more than NODE_MAX_BATCH sequences per iteration', async () => {
    const { add, runAll, steps } = setup({ maxBatch: 2 });
    for (let i = 0; i < 5; i++) add({ requestId: `q${i}`, maxTokens: 3 });
    await runAll();
    expect(Math.max(...steps.map((s) => s.seqIds.length))).toBeLessThanOrEqual(2);
    expect(new Set(steps.flatMap((s) => s.seqIds)).size).toBe(5);
  });

  it('tells the heartbeat what its waiting requests still have to prefill, and nothing once they ran', async () => {
    const { sut, add, runAll } = setup({ maxBatch: 2 });
    add({ requestId: 'a', tokens: tok.encode('x'.repeat(300)) });
    add({ requestId: 'b', tokens: tok.encode('y'.repeat(40)) });
    expect(sut.queuedPrefill()).toEqual([
      { promptTokens: 300, cachedTokens: 0 },
      { promptTokens: 40, cachedTokens: 0 },
    ]);
    await runAll();
    expect(sut.queuedPrefill()).toEqual([]);
  });

  describe('a full KV pool', () => {
    /** A request that fits the 4-block (64-token) pool alone: 20 prompt + 30 generated tokens. */
    const fitting = (i: number) => ({
      requestId: `f${i}`,
      tokens: tok.encode(`prompt number ${i} padded.`.padEnd(20, '.')),
      maxTokens: 30,
    });

    it('preempts and recomputes instead of failing: every request that fits alone completes, with the tokens it gets alone', async () => {
      const alone = await Promise.all(
        [0, 1, 2].map(async (i) => {
          const r = setup({ engine: { kvBlocks: 4 } });
          r.add(fitting(i));
          await r.runAll();
          return r.sink.of(`f${i}`).flatMap((e) => e.tokens ?? []);
        }),
      );
      const { add, runAll, sink, nodeMetrics, engine } = setup({ engine: { kvBlocks: 4 } });
      for (const i of [0, 1, 2]) add(fitting(i));
      await runAll();
      for (const i of [0, 1, 2]) {
        const events = sink.of(`f${i}`);
        expect(events.at(-1)).toMatchObject({ done: true, finishReason: FinishReason.LENGTH });
        expect(events.some((e) => e.error)).toBe(false);
        expect(events.flatMap((e) => e.tokens ?? [])).toEqual(alone[i]);
      }
      expect((await nodeMetrics.preemptions.get()).values[0]!.value).toBeGreaterThan(0);
      expect((await nodeMetrics.kvPlanMisses.get()).values[0]?.value ?? 0).toBe(0);
      expect(engine.kvUsage()).toBe(0);
    });

    it('never asks the engine for more blocks than it has, under a steady stream of arrivals', async () => {
      const { sut, add, runAll, sink, nodeMetrics } = setup({ engine: { kvBlocks: 6 }, maxBatch: 4 });
      for (let i = 0; i < 12; i++) {
        add(fitting(i));
        await sut.runIteration();
      }
      await runAll();
      for (let i = 0; i < 12; i++) expect(sink.of(`f${i}`).at(-1)).toMatchObject({ done: true, finishReason: FinishReason.LENGTH });
      expect((await nodeMetrics.kvPlanMisses.get()).values[0]?.value ?? 0).toBe(0);
    });

    /** One prompt sent twice, the second request after the first has finished. */
    async function samePromptTwice(prefixCache: 'on' | 'off') {
      const { add, runAll, sink } = setup({ engine: { kvBlocks: 16 }, prefixCache });
      const prompt = tok.encode('a system prompt that many requests share, long enough for blocks');
      for (const requestId of ['first', 'second']) {
        add({ requestId, tokens: prompt, maxTokens: 2 });
        await runAll();
      }
      return { prompt, first: sink.of('first'), second: sink.of('second') };
    }

    it('with the prefix cache off, a repeated prompt is computed again', async () => {
      const { second } = await samePromptTwice('off');
      expect(second.at(-1)?.usage?.cachedTokens).toBe(0);
    });

    it('reports prefix-cache hits in usage: a repeated prompt is served from cached blocks', async () => {
      const { prompt, first, second } = await samePromptTwice('on');
      expect(first.at(-1)?.usage?.cachedTokens).toBe(0);
      const cached = second.at(-1)?.usage?.cachedTokens ?? 0;
      expect(cached).toBe(Math.floor((prompt.length - 1) / 16) * 16);
      expect(second[0]?.usage?.cachedTokens).toBe(cached);
    });
  });

  it('stops at EOS without emitting it, counting it as generated', async () => {
    const { sink, add, runAll } = setup({ engine: { eosProbability: 1 } });
    const id = add({ maxTokens: 10 });
    await runAll();
    expect(sink.of(id)).toEqual([
      expect.objectContaining({
        seq: 0,
        tokens: [],
        done: true,
        finishReason: FinishReason.STOP,
        usage: { promptTokens: 5, completionTokens: 1, cachedTokens: 0 },
      }),
    ]);
  });

  it('runs past EOS to max_tokens with ignore_eos, EOS streamed as a token', async () => {
    const eos = new SimEngine().models()[0].eosTokenId;
    const { sink, add, runAll } = setup({ engine: { eosProbability: 1 } });
    const long = add({
      maxTokens: 6,
      requestId: 'long',
      sampling: create(SamplingParamsSchema, { temperature: 1, topP: 1, maxTokens: 6, seed: 7n, ignoreEos: true }),
    });
    await runAll();
    const events = sink.of(long);
    expect(events.flatMap((e) => e.tokens)).toEqual(Array(6).fill(eos));
    expect(events.at(-1)).toMatchObject({ done: true, finishReason: FinishReason.LENGTH, usage: { completionTokens: 6 } });
  });

  it('stops at a request stop token', async () => {
    const printable = Array.from({ length: 0x7f - 0x20 }, (_, i) => 0x20 + i);
    const { sink, add, runAll } = setup();
    const id = add({ maxTokens: 10, stop: printable });
    await runAll();
    expect(sink.of(id)).toHaveLength(1);
    expect(sink.of(id)[0]).toMatchObject({ done: true, finishReason: FinishReason.STOP });
  });

  it('ends with length when the context is full (max_tokens unset)', async () => {
    const { sink, add, runAll } = setup();
    const id = add({ maxTokens: 0, tokens: new Array(4090).fill(65) });
    await runAll();
    const events = sink.of(id);
    expect(events).toHaveLength(6);
    expect(events[5]).toMatchObject({ done: true, finishReason: FinishReason.LENGTH, usage: { completionTokens: 6 } });
  });

  it('cancels a running request at once: engine released, one cancelled event, nothing after', async () => {
    const { sut, sink, add, engine, runAll, nodeMetrics } = setup();
    const id = add({ maxTokens: 100 });
    const other = add({ maxTokens: 5 });
    await sut.runIteration();
    await sut.runIteration();
    expect(sut.cancel(id, 'client')).toBe(true);
    expect(engine.activeSequences).toBe(1);
    await runAll();
    const events = sink.of(id);
    expect(events.at(-1)).toMatchObject({ done: true, finishReason: FinishReason.CANCELLED, error: { code: ErrorCode.Cancelled } });
    expect(events).toHaveLength(3);
    expect(sink.of(other).at(-1)).toMatchObject({ done: true, finishReason: FinishReason.LENGTH });
    expect(sut.cancel(id, 'client')).toBe(false);
    expect((await nodeMetrics.cancelled.get()).values).toEqual([expect.objectContaining({ labels: { reason: 'client' }, value: 1 })]);
  });

  it('drops the output of an engine call that was in flight when the request was cancelled', async () => {
    let wake: () => void = () => undefined;
    const { sut, sink, add, engine } = setup({ engine: { sleep: () => new Promise<void>((r) => (wake = r)) } });
    const id = add({ maxTokens: 100 });
    const iteration = sut.runIteration();
    await new Promise((r) => setImmediate(r));
    sut.cancel(id, 'client');
    wake();
    await iteration;
    expect(sink.of(id)).toEqual([expect.objectContaining({ seq: 0, done: true, finishReason: FinishReason.CANCELLED })]);
    expect(engine.activeSequences).toBe(0);
  });

  it('cancels a request whose deadline passed, with code timeout', async () => {
    const { sut, sink, add, clock, engine } = setup();
    const id = add({ maxTokens: 100, deadlineUnixMs: clock.unix + 1000 });
    await sut.runIteration();
    clock.unix += 1001;
    await sut.runIteration();
    expect(sink.of(id).at(-1)).toMatchObject({ done: true, finishReason: FinishReason.CANCELLED, error: { code: ErrorCode.Timeout } });
    expect(engine.activeSequences).toBe(0);
  });

  it('records TTFT and TPOT for finished requests', async () => {
    const { add, runAll, metrics } = setup();
    add({ maxTokens: 3 });
    await runAll();
    const count = async (h: typeof metrics.timeToFirstToken) => (await h.get()).values.find((v) => v.metricName?.endsWith('_count'))?.value;
    expect(await count(metrics.timeToFirstToken)).toBe(1);
    expect(await count(metrics.timePerOutputToken)).toBe(1);
  });

  it('drain cancels what is still running after the timeout', async () => {
    const { sut, sink, add } = setup();
    const id = add({ maxTokens: 100 });
    await sut.runIteration();
    await sut.drain(10);
    expect(sink.of(id).at(-1)).toMatchObject({ done: true, finishReason: FinishReason.CANCELLED });
  });

  it('runs in the background and sleeps when idle', async () => {
    const { sut, sink, add } = setup();
    sut.start();
    const id = add({ maxTokens: 3 });
    await new Promise<void>((resolve) => {
      const t = setInterval(() => sink.of(id).some((e) => e.done) && (clearInterval(t), resolve()), 5);
    });
    await sut.stop();
    expect(sink.of(id)).toHaveLength(3);
  });

  it('gives the event loop a turn between iterations, so cancels and heartbeats get through an engine that never waits', async () => {
    // A CPU engine resolves its calls without a macrotask; without a yield the loop would run
    // this request to its end before any timer or NATS message is handled.
    const { sut, sink, add } = setup({ engine: { sleep: () => Promise.resolve() } });
    sut.start();
    const id = add({ maxTokens: 100_000 });
    await new Promise((r) => setTimeout(r, 0));
    const seen = sink.of(id).length;
    expect(seen).toBeGreaterThan(0);
    expect(seen).toBeLessThan(100_000);
    expect(sut.cancel(id, 'client')).toBe(true);
    await sut.stop();
    expect(sink.of(id).at(-1)).toMatchObject({ done: true, finishReason: FinishReason.CANCELLED });
  });
});
