import { create } from '@bufbuild/protobuf';
import { ByteTokenizer, ReferenceEngine } from '@mnemo/engine';
import { FinishReason, InferenceRequestSchema } from '@mnemo/proto';
import { JsonLogger, ServiceMetrics, type Clock } from '@mnemo/service-kit';
import type { NodeManagerConfig } from '../config/node-manager.config.js';
import { NodeMetrics } from '../shared/node.metrics.js';
import { BatchScheduler } from './batch.scheduler.js';
import { Sequence } from '../shared/sequence.js';
import { SequenceStore } from './sequence.store.js';
import { SwapManager } from './swap.manager.js';
import type { TokenEventInit, TokenSink } from './token.sink.port.js';

const tok = new ByteTokenizer();

class Inbox implements TokenSink {
  readonly events: Array<TokenEventInit & { at: number }> = [];
  emit(_seq: Sequence, event: TokenEventInit): void {
    this.events.push({ ...event, at: this.events.length });
  }
  tokens(id: string): number[] {
    return this.events.filter((e) => e.requestId === id).flatMap((e) => e.tokens ?? []);
  }
  last(id: string) {
    return this.events.filter((e) => e.requestId === id).at(-1);
  }
}

const clock: Clock = { monotonicMs: () => performance.now(), unixMs: () => Date.now() };

async function setup(
  kvBlocks: number,
  opts: { preemption: 'swap' | 'recompute'; scheduling: 'fcfs' | 'priority'; maxBatch?: number; swapIn?: 'adaptive' | 'sync' | 'async' },
) {
  const swap = opts.preemption === 'swap';
  const engine = await ReferenceEngine.create({
    models: ['mnemo-tiny'],
    backend: 'cpu',
    kvBlocks,
    ...(swap ? { blockGroups: 4, swap: { granularity: 'grouped' as const, hostBytes: 64 * 2 ** 20 } } : {}),
  });
  const store = new SequenceStore();
  const sink = new Inbox();
  const metrics = new ServiceMetrics('node-test');
  const nodeMetrics = new NodeMetrics(metrics);
  const logger = new JsonLogger('test', 'error', () => undefined);
  const config = {
    NODE_ID: 'n1',
    NODE_MAX_BATCH: opts.maxBatch ?? 8,
    NODE_MAX_PREFILL_TOKENS: 8192,
    NODE_PREFIX_CACHE: 'on',
    NODE_PREEMPTION: opts.preemption,
    NODE_SCHEDULING: opts.scheduling,
    NODE_PRIORITY_UPDATE_EVERY: 1,
    NODE_FAIRNESS_AGING_ITERATIONS: 1000,
    NODE_FAIRNESS_TOKENS_PER_LEVEL: 0,
    NODE_SWAP_IN: opts.swapIn ?? 'adaptive',
  } as NodeManagerConfig;
  const swaps = new SwapManager(engine, config, store, clock, nodeMetrics, logger);
  const sut = new BatchScheduler(store, engine, sink, config, clock, nodeMetrics, metrics, logger, undefined, swaps);
  const add = (requestId: string, text: string, maxTokens: number, priority = 0) => {
    const request = create(InferenceRequestSchema, {
      requestId,
      model: 'mnemo-tiny',
      tokens: tok.encode(text),
      replySubject: `_INBOX.${requestId}`,
      priority,
      sampling: { temperature: 1, topP: 1, maxTokens, seed: 7n, stopTokenIds: [] },
    });
    store.add(new Sequence(request, engine.models()[0]!, store.arrivalSeq(), clock.monotonicMs()));
  };
  const runAll = async () => {
    for (let i = 0; i < 10_000 && (await sut.runIteration()); i++);
  };
  const counter = async (
    c: { get(): Promise<{ values: Array<{ value: number; labels: Record<string, unknown> }> }> },
    labels: Record<string, string> = {},
  ) => (await c.get()).values.filter((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x)).reduce((n, v) => n + v.value, 0);
  return { sut, engine, sink, add, runAll, nodeMetrics, counter, store };
}

/** Each request alone on a big pool: the tokens it must get however often it is preempted. */
async function alone(reqs: Array<[string, string, number]>): Promise<Map<string, number[]>> {
  const out = new Map<string, number[]>();
  for (const [id, text, n] of reqs) {
    const r = await setup(256, { preemption: 'recompute', scheduling: 'fcfs' });
    r.add(id, text, n);
    await r.runAll();
    out.set(id, r.sink.tokens(id));
    await r.engine.close();
  }
  return out;
}

describe('swap preemption in the batch scheduler', () => {
  /**
   * Three requests that each fit the 8-block pool alone (40 prompt + up to 60 generated tokens = 7 blocks), never two at once (r2 samples
   * EOS at 32).
   */
  const reqs: Array<[string, string, number]> = [0, 1, 2].map((i) => [
    `r${i}`,
    `request ${i}: `.padEnd(40, String.fromCharCode(97 + i)),
    60,
  ]);

  it.each(['fcfs', 'priority'] as const)(
    '%s: swapped-out requests complete with exactly the tokens they get alone; nothing is recomputed',
    async (scheduling) => {
      const want = await alone(reqs);
      const { add, runAll, sink, nodeMetrics, counter, engine } = await setup(8, { preemption: 'swap', scheduling });
      reqs.forEach(([id, text, n], i) => add(id, text, n, i));
      await runAll();
      for (const [id] of reqs) {
        expect(sink.last(id)).toMatchObject({ done: true });
        expect(sink.last(id)!.error).toBeUndefined();
        expect(sink.tokens(id)).toEqual(want.get(id));
      }
      expect(await counter(nodeMetrics.swaps, { direction: 'out' })).toBeGreaterThan(0);
      expect(await counter(nodeMetrics.swaps, { direction: 'in' })).toBe(await counter(nodeMetrics.swaps, { direction: 'out' }));
      expect(await counter(nodeMetrics.swapBytes, { direction: 'out' })).toBeGreaterThan(0);
      expect(await counter(nodeMetrics.kvPlanMisses)).toBe(0);
      expect(engine.stats().preemptions).toBe(0);
      expect(engine.kvUsage()).toBe(0);
      expect(engine.swap!.hostBytes()).toBe(0);
      await engine.close();
    },
  );

  it(
    'priority: a high-priority arrival swaps a running low-priority ' +
      'request out and finishes first; both get the tokens they get alone',
    async () => {
      const [[, lowText], [, highText]] = reqs;
      const want = await alone([
        ['low', lowText!, 50],
        ['high', highText!, 20],
      ]);
      // 6 blocks: low (40 + 50 tokens) fits alone, but not beside high (40 + 20) once it has started.
      const { add, runAll, sink, sut, engine, counter, nodeMetrics } = await setup(6, { preemption: 'swap', scheduling: 'priority' });
      add('low', lowText!, 50, 0);
      for (let i = 0; i < 5; i++) await sut.runIteration();
      add('high', highText!, 20, 10);
      await runAll();
      expect(sink.last('high')).toMatchObject({ done: true, finishReason: FinishReason.LENGTH });
      expect(sink.last('low')).toMatchObject({ done: true, finishReason: FinishReason.LENGTH });
      expect(sink.last('low')!.at).toBeGreaterThan(sink.last('high')!.at);
      expect(sink.tokens('high')).toEqual(want.get('high'));
      expect(sink.tokens('low')).toEqual(want.get('low'));
      expect(await counter(nodeMetrics.swaps, { direction: 'out' })).toBeGreaterThanOrEqual(1);
      expect(engine.stats().preemptions).toBe(0);
      await engine.close();
    },
  );

  it('asynchronous swap-ins racing decodes and cancels: survivors get the tokens they get alone, nothing leaks', async () => {
    const more: Array<[string, string, number]> = [...reqs, ['r3', 'request 3: '.padEnd(40, 'd'), 60]];
    const want = await alone(more);
    const { add, sut, sink, engine, counter, nodeMetrics, store } = await setup(12, {
      preemption: 'swap',
      scheduling: 'priority',
      swapIn: 'async',
    });
    more.forEach(([id, text, n], i) => add(id, text, n, i % 2));
    // A client cancel of r1 arriving while its asynchronous swap-in copy is in flight (the engine
    // call is the real one; the cancel lands right after the copy is issued).
    let cancelledWhileSwapping = false;
    const swap = engine.swap!;
    const swapIn = swap.swapIn.bind(swap);
    swap.swapIn = (ids) => {
      const copying = swapIn(ids);
      if (ids.includes('r1') && store.get('r1')?.phase === 'swapping') cancelledWhileSwapping = sut.cancel('r1', 'client');
      return copying;
    };
    for (let i = 0; i < 10_000; i++) {
      // Rotate priorities so sequences keep trading places (swapped out, swapped in asynchronously).
      if (i % 7 === 0) for (const s of store.all()) s.request.priority = (s.request.priority + 1) % 3;
      if (!(await sut.runIteration())) break;
    }
    expect(cancelledWhileSwapping).toBe(true);
    expect(await counter(nodeMetrics.swaps, { direction: 'in', mode: 'async' })).toBeGreaterThan(0);
    for (const [id] of more) {
      if (id === 'r1') continue;
      expect(sink.tokens(id)).toEqual(want.get(id));
    }
    expect(store.size).toBe(0);
    expect(engine.kvUsage()).toBe(0);
    expect(engine.swap!.hostBytes()).toBe(0);
    await engine.close();
  });

  it('fcfs without swap keeps recompute preemption (the baseline stays available)', async () => {
    const { add, runAll, sink, engine, counter, nodeMetrics } = await setup(8, { preemption: 'recompute', scheduling: 'fcfs' });
    reqs.forEach(([id, text, n]) => add(id, text, n));
    await runAll();
    for (const [id] of reqs) expect(sink.last(id)).toMatchObject({ done: true });
    expect(engine.stats().preemptions).toBeGreaterThan(0);
    expect(await counter(nodeMetrics.swaps)).toBe(0);
    await engine.close();
  });
});
