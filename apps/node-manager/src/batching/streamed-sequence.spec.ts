import { create } from '@bufbuild/protobuf';
import { chunkKeys, ErrorCode } from '@mnemo/kv-core';
import { ReferenceEngine, syntheticWeightsFor, type Engine } from '@mnemo/engine';
import { FinishReason, InferenceRequestSchema, SamplingParamsSchema } from '@mnemo/proto';
import { ServiceMetrics, type Clock } from '@mnemo/service-kit';
import { createKernelBackend, type KernelBackend } from '@mnemo/native-cuda';
import type { NodeManagerConfig } from '../config/node-manager.config.js';
import { AdmitInferenceCommand } from '../inference/admit-inference.command.js';
import { AdmitInferenceUseCase } from '../inference/admit-inference.use-case.js';
import { CancelledAttempts } from '../inference/cancelled-attempts.js';
import { NodeLifecycle } from '../shared/node.lifecycle.js';
import type { Sequence } from '../shared/sequence.js';
import { SequenceStore } from './sequence.store.js';
import type { TokenEventInit, TokenSink } from './token.sink.port.js';
import { batchSchedulerOf } from '../../test/batch-scheduler.fixture.js';

// mnemo-small (6 layers). The streaming node has 6 device blocks (96 tokens) and 1 MiB (21 blocks) of host memory.
const MODEL = 'mnemo-small';
const WEIGHTS = syntheticWeightsFor(MODEL);
const LONG = Array.from({ length: 150 }, (_, j) => (j * 31 + 7) % 250);
const SHORT = Array.from({ length: 20 }, (_, j) => (j * 13 + 3) % 250);
const clock: Clock = { monotonicMs: () => performance.now(), unixMs: () => Date.now() };

class Inboxes implements TokenSink {
  readonly events: TokenEventInit[] = [];
  emit(_seq: Sequence, event: TokenEventInit): void {
    this.events.push(event);
  }
  tokens(id: string): number[] {
    return this.events.filter((e) => e.requestId === id).flatMap((e) => e.tokens ?? []);
  }
  last(id: string): TokenEventInit | undefined {
    return this.events.filter((e) => e.requestId === id).at(-1);
  }
}

/** A node's admission and batch loop over a real reference engine; the logits it sampled from, per request. */
function node(engine: ReferenceEngine) {
  const store = new SequenceStore();
  const sink = new Inboxes();
  const metrics = new ServiceMetrics('node-test');
  const config = {
    NODE_ID: 'n1',
    NODE_MAX_BATCH: 8,
    NODE_MAX_PREFILL_TOKENS: 8192,
    NODE_MAX_WAITING: 16,
    NODE_PREFIX_CACHE: 'on',
  } as NodeManagerConfig;
  const scheduler = batchSchedulerOf({ store, engine: engine as Engine, sink, config, clock, metrics });
  const admit = new AdmitInferenceUseCase(store, engine, config, clock, new NodeLifecycle(), new CancelledAttempts(clock));
  const logits = new Map<string, Float32Array[]>();
  const sample = engine.sample.bind(engine);
  engine.sample = (seqId, l) => {
    logits.set(seqId, [...(logits.get(seqId) ?? []), l.slice()]);
    return sample(seqId, l);
  };
  const send = (id: string, tokens: number[], maxTokens: number) =>
    admit.execute(
      new AdmitInferenceCommand(
        create(InferenceRequestSchema, {
          requestId: id,
          model: MODEL,
          tokens,
          chunkKeys: chunkKeys(MODEL, '', tokens),
          replySubject: `_INBOX.${id}`,
          sampling: create(SamplingParamsSchema, { temperature: 0, maxTokens }),
        }),
      ),
    );
  const runAll = async () => {
    for (let i = 0; i < 10_000 && store.size > 0; i++) await scheduler.runIteration();
  };
  return { engine, store, sink, scheduler, send, runAll, logits, seq: (id: string) => store.get(id) };
}

const bitsOf = (a: Float32Array[] | undefined) => (a ?? []).map((l) => Array.from(new Uint32Array(l.buffer, l.byteOffset, l.length)));
const streaming = () =>
  node(
    new ReferenceEngine(createKernelBackend('cpu') as KernelBackend<unknown>, [WEIGHTS], 6, {
      layerStream: { window: 2, hostBytes: 2 ** 20 },
    }),
  );

describe('a streamed sequence on a node', () => {
  it(
    'a request longer than the device cache completes through the layer ' +
      'stream, bit-identical to a node with ample memory, beside a short one',
    async () => {
      const small = streaming();
      const ample = node(new ReferenceEngine(createKernelBackend('cpu') as KernelBackend<unknown>, [WEIGHTS], 64));
      for (const n of [small, ample]) {
        n.send('short', SHORT, 6);
        n.send('long', LONG, 8);
      }
      expect(small.seq('long')?.streamed).toBe(true);
      expect(ample.seq('long')?.streamed).toBe(false);
      await Promise.all([small.runAll(), ample.runAll()]);
      for (const id of ['short', 'long']) {
        expect(small.sink.last(id)).toMatchObject({ done: true, finishReason: FinishReason.LENGTH });
        expect(small.sink.tokens(id)).toEqual(ample.sink.tokens(id));
        expect(bitsOf(small.logits.get(id))).toEqual(bitsOf(ample.logits.get(id)));
      }
      expect(small.engine.layerStream!.stats(MODEL).sequences).toBe(1);
      expect(small.engine.freeBlocks(MODEL)).toBe(6);
      await small.engine.close();
      await ample.engine.close();
    },
  );

  it('waits for its memory without being overtaken by later requests of its model', async () => {
    const n = streaming();
    // 20 + 60 tokens: 5 of the 6 blocks; the stream's planes need 4, so the long request waits.
    n.send('first', SHORT, 60);
    await n.scheduler.runIteration();
    n.send('long', LONG, 8);
    n.send('later', SHORT.slice(0, 10), 4);
    await n.runAll();
    const order = n.sink.events.filter((e) => e.seq === 0).map((e) => e.requestId);
    expect(order).toEqual(['first', 'long', 'later']);
    for (const id of ['first', 'long', 'later']) expect(n.sink.last(id)).toMatchObject({ done: true, finishReason: FinishReason.LENGTH });
    await n.engine.close();
  });

  it('refuses what neither the device nor the stream can hold, naming both limits', async () => {
    const n = streaming();
    // 600 + 100 tokens: 44 blocks; the stream holds at most 18.
    expect(() =>
      n.send(
        'huge',
        Array.from({ length: 600 }, (_, j) => j % 250),
        100,
      ),
    ).toThrow(
      expect.objectContaining({
        code: ErrorCode.PromptTooLong,
        message: expect.stringMatching(/has 6 for mnemo-small on the device, 18 through the layer stream cache/),
      }),
    );
    expect(n.store.size).toBe(0);
    await n.engine.close();
  });

  it('with the stream off on the engine, the same long request is refused', async () => {
    const n = node(new ReferenceEngine(createKernelBackend('cpu') as KernelBackend<unknown>, [WEIGHTS], 6));
    expect(() => n.send('long', LONG, 8)).toThrow(expect.objectContaining({ code: ErrorCode.PromptTooLong }));
    await n.engine.close();
  });

  it('a cancel mid-stream frees every block it held; the next request runs at once', async () => {
    const n = streaming();
    n.send('long', LONG, 40);
    const loop = n.runAll();
    // Wait until it has decoded a few tokens, then cancel during a pass.
    while (n.sink.tokens('long').length < 3) await new Promise((r) => setImmediate(r));
    expect(n.engine.freeBlocks(MODEL)).toBe(0);
    expect(n.scheduler.cancel('long', 'client')).toBe(true);
    await loop;
    expect(n.sink.last('long')).toMatchObject({ done: true, finishReason: FinishReason.CANCELLED });
    expect(n.engine.freeBlocks(MODEL)).toBe(6);
    expect(n.engine.hasSequence('long')).toBe(false);
    expect(n.engine.layerStream!.canStart(MODEL, 18)).toBe(true);
    n.send('again', LONG, 4);
    await n.runAll();
    expect(n.sink.last('again')).toMatchObject({ done: true, finishReason: FinishReason.LENGTH });
    await n.engine.close();
  });
});
