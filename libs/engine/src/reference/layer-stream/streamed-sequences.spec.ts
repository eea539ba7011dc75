import { ErrorCode } from '@mnemo/kv-core';
import { bits } from '../../../test/bits.js';
import { cpuBackend } from '../../../test/test-backend.js';
import { syntheticWeightsFor } from '../../weights/synthetic-weights.generator.js';
import { ReferenceEngine } from '../reference.engine.js';
import { StreamedSequences } from './streamed-sequences.js';

// mnemo-small: 6 layers, full block 48 KiB at fp32. 6 device blocks (96 tokens); 1 MiB of host: 21 blocks.
const MODEL = 'mnemo-small';
const GREEDY = { temperature: 0, topP: 1, seed: 0 };
const PROMPT = Array.from({ length: 150 }, (_, j) => (j * 31 + 7) % 250);
const DECODE = 8;
// 150 + 8 tokens: 10 blocks, of which ⌈10·2/6⌉ = 4 hold the planes, 2 back blocks on the device, 8 go to the host.
const CONTEXT_BLOCKS = 10;
const STREAM = { window: 2, hostBytes: 2 ** 20 };
const WEIGHTS = syntheticWeightsFor(MODEL);

/** The engine's logits at every sampling step (observed, not replaced). */
function recordLogits(engine: ReferenceEngine): Float32Array[] {
  const seen: Float32Array[] = [];
  const sample = engine.sample.bind(engine);
  engine.sample = (seqId, logits) => {
    seen.push(logits.slice());
    return sample(seqId, logits);
  };
  return seen;
}

async function converse(engine: ReferenceEngine, stream: boolean, sampling = GREEDY): Promise<number[]> {
  const first = await engine.prefill([
    { seqId: 's', model: MODEL, tokens: PROMPT, sampling, ...(stream ? { layerStream: { contextBlocks: CONTEXT_BLOCKS } } : {}) },
  ]);
  const out = [first[0]!.token];
  for (let i = 1; i < DECODE; i++) out.push((await engine.decode(['s']))[0]!.token);
  return out;
}

const streaming = () => new ReferenceEngine(cpuBackend(), [WEIGHTS], 6, { layerStream: STREAM });

describe(StreamedSequences.name, () => {
  it.each([
    ['greedy', GREEDY],
    ['sampled (temperature 0.8, seeded)', { temperature: 0.8, topP: 0.95, seed: 7 }],
  ])(
    'a context longer than the device cache, streamed, gives the tokens and logits of ample device memory bit for bit: %s',
    async (_n, sampling) => {
      const sut = streaming();
      const ample = new ReferenceEngine(cpuBackend(), [WEIGHTS], 64);
      const got = recordLogits(sut);
      const expected = recordLogits(ample);
      const tokens = await converse(sut, true, sampling);
      expect(tokens).toEqual(await converse(ample, false, sampling));
      expect(got.map(bits)).toEqual(expected.map(bits));
      const stats = sut.layerStream!.stats(MODEL);
      expect(stats.sequences).toBe(1);
      expect(stats.bytes).toBeGreaterThan(0);
      expect(stats.stallSeconds).toBeGreaterThanOrEqual(0);
      // The device cache is full of the stream's planes and backing blocks while it lives.
      expect(sut.freeBlocks(MODEL)).toBe(0);
      sut.release('s');
      expect(sut.freeBlocks(MODEL)).toBe(6);
      await sut.close();
      await ample.close();
    },
  );

  it('knows its limits: the longest streamed context, and one stream per model at a time', async () => {
    const sut = streaming();
    // C + ⌈C/3⌉ ≤ 6 + 21 and ⌈C/3⌉ ≤ 6 → 18 blocks (C = 20 would need 27 + … over the budget).
    expect(sut.layerStream!.limit(MODEL, 6)).toBe(18);
    expect(sut.layerStream!.canStart(MODEL, 18)).toBe(true);
    expect(sut.layerStream!.canStart(MODEL, 19)).toBe(false);
    await sut.prefill([{ seqId: 'a', model: MODEL, tokens: PROMPT.slice(0, 40), sampling: GREEDY, layerStream: { contextBlocks: 3 } }]);
    expect(sut.layerStream!.canStart(MODEL, 3)).toBe(false);
    await expect(
      sut.prefill([{ seqId: 'b', model: MODEL, tokens: PROMPT.slice(0, 40), sampling: GREEDY, layerStream: { contextBlocks: 3 } }]),
    ).rejects.toMatchObject({ code: ErrorCode.Overloaded });
    expect(sut.hasSequence('b')).toBe(false);
    expect(() => sut.preempt('a')).toThrow(expect.objectContaining({ code: ErrorCode.Conflict }));
    sut.release('a');
    expect(sut.layerStream!.canStart(MODEL, 3)).toBe(true);
    await sut.close();
  });

  it('a context the stream cannot hold is refused, taking nothing', async () => {
    const sut = streaming();
    await expect(
      sut.prefill([{ seqId: 'x', model: MODEL, tokens: PROMPT, sampling: GREEDY, layerStream: { contextBlocks: 19 } }]),
    ).rejects.toMatchObject({ code: ErrorCode.Overloaded });
    expect(sut.freeBlocks(MODEL)).toBe(6);
    expect(sut.hasSequence('x')).toBe(false);
    await sut.close();
  });

  it.each([
    ['during the prompt pass', 0],
    ['during a decode pass', 3],
  ])('a release %s frees everything once the pass ends; the output is dropped', async (_n, decodes) => {
    const sut = streaming();
    const first = sut.prefill([
      { seqId: 's', model: MODEL, tokens: PROMPT, sampling: GREEDY, layerStream: { contextBlocks: CONTEXT_BLOCKS } },
    ]);
    let pending: Promise<unknown> = first;
    if (decodes > 0) {
      await first;
      for (let i = 1; i < decodes; i++) await sut.decode(['s']);
      pending = sut.decode(['s']);
    }
    await new Promise((r) => setImmediate(r));
    sut.release('s');
    expect(sut.hasSequence('s')).toBe(false);
    await expect(pending).resolves.toEqual([]);
    expect(sut.freeBlocks(MODEL)).toBe(6);
    expect(sut.layerStream!.canStart(MODEL, 18)).toBe(true);
    // The freed blocks serve an ordinary request at once.
    await expect(sut.prefill([{ seqId: 'next', model: MODEL, tokens: PROMPT.slice(0, 90), sampling: GREEDY }])).resolves.toHaveLength(1);
    await sut.close();
  });

  it('rejects a window some model cannot hold', () => {
    expect(
      () => new ReferenceEngine(cpuBackend(), [syntheticWeightsFor('mnemo-tiny')], 6, { layerStream: { window: 5, hostBytes: 2 ** 20 } }),
    ).toThrow(RangeError);
  });
});
