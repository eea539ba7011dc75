// Failover continues a stream token-exactly (kv-core planContinuation): a sequence prefilled with
// its prompt plus the first k tokens of an earlier run, with `drawOffset` k, samples the tokens
// that run sampled after them — greedy and seeded, on the sim engine and the reference engine (CPU).
import { ErrorCode } from '@mnemo/kv-core';
import { cpuBackend } from '../test/test-backend.js';
import type { Engine, SamplingParams } from './engine.interface.js';
import { ReferenceEngine } from './reference/reference.engine.js';
import { SimEngine } from './sim/sim.engine.js';
import { syntheticWeightsFor } from './weights/synthetic-weights.generator.js';

const GREEDY: SamplingParams = { temperature: 0, topP: 1, seed: 0 };
const SEEDED: SamplingParams = { temperature: 0.9, topP: 0.95, seed: 1234 };
const N = 12;
const prompt = Array.from({ length: 21 }, (_, i) => (i * 37 + 5) % 256);
const zeroCost = { prefillBaseMs: 0, prefillPerTokenMs: 0, decodeBaseMs: 0, decodePerSeqMs: 0, decodePerKContextMs: 0 };

const engines: Array<[string, () => Engine]> = [
  ['sim', () => new SimEngine({ cost: zeroCost, eosProbability: 0.02 })],
  ['reference (CPU)', () => new ReferenceEngine(cpuBackend(), [syntheticWeightsFor('mnemo-tiny')], 64)],
];

let next = 0;
/** `n` tokens of one sequence: the prefill's, then decodes. `salt` shares its prefix cache. */
async function run(sut: Engine, tokens: readonly number[], sampling: SamplingParams, n: number, salt?: string): Promise<number[]> {
  const seqId = `s${++next}`;
  const out = [(await sut.prefill([{ seqId, model: 'mnemo-tiny', tokens, sampling, ...(salt ? { cacheSalt: salt } : {}) }]))[0].token];
  while (out.length < n) out.push((await sut.decode([seqId]))[0].token);
  sut.release(seqId);
  return out;
}

describe.each(engines)('a stream continued from a draw offset, %s engine', (_name, make) => {
  let sut: Engine;
  beforeAll(() => {
    sut = make();
  });
  afterAll(async () => {
    await sut.close();
  });

  describe.each<[string, SamplingParams]>([
    ['greedy', GREEDY],
    ['seeded sampling', SEEDED],
  ])('%s', (_mode, sampling) => {
    let whole: number[];
    beforeAll(async () => {
      whole = await run(sut, prompt, sampling, N);
    });

    it.each([
      ['before the first token', 0],
      ['after the first token', 1],
      ['mid-stream', N / 2],
      ['one token before the end', N - 1],
    ])('gives the uninterrupted run’s tokens when cut %s', async (_at, k) => {
      const continued = await run(sut, [...prompt, ...whole.slice(0, k)], { ...sampling, drawOffset: k }, N - k);
      expect([...whole.slice(0, k), ...continued]).toEqual(whole);
    });

    it('also when the streamed prefix’s KV comes from the prefix cache', async () => {
      const cachedWhole = await run(sut, prompt, sampling, N, 'tenant');
      expect(cachedWhole).toEqual(whole);
      const k = N / 2;
      // The earlier run's KV of prompt + its first tokens is cached under the same salt now.
      await run(sut, [...prompt, ...whole.slice(0, k)], { ...sampling, drawOffset: k }, 1, 'tenant');
      const continued = await run(sut, [...prompt, ...whole.slice(0, k)], { ...sampling, drawOffset: k }, N - k, 'tenant');
      expect(continued).toEqual(whole.slice(k));
    });
  });

  it('needs the draw offset: a continuation reseeded from its longer prompt samples other tokens', async () => {
    const whole = await run(sut, prompt, SEEDED, N);
    const k = N / 2;
    const reseeded = await run(sut, [...prompt, ...whole.slice(0, k)], SEEDED, N - k);
    expect(reseeded).not.toEqual(whole.slice(k));
  });

  it.each([
    ['as long as the prompt', prompt.length],
    ['negative', -1],
    ['fractional', 1.5],
  ])('refuses a draw offset %s and keeps no sequence', async (_what, drawOffset) => {
    await expect(
      sut.prefill([{ seqId: 'bad', model: 'mnemo-tiny', tokens: prompt, sampling: { ...SEEDED, drawOffset } }]),
    ).rejects.toMatchObject({ code: ErrorCode.InvalidRequest });
    expect(sut.kvUsage()).toBe(0);
  });
});
