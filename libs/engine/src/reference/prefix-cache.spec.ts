import { bits } from '../../test/bits.js';
import { cpuBackend } from '../../test/test-backend.js';
import { syntheticWeightsFor } from '../weights/synthetic-weights.generator.js';
import { ReferenceEngine } from './reference.engine.js';

const MODEL = 'mnemo-tiny';
const GREEDY = { temperature: 0, topP: 1, seed: 0 };
const SAMPLED = { temperature: 0.9, topP: 0.95, seed: 1234 };

const toks = (n: number, salt = 0): number[] => Array.from({ length: n }, (_, i) => (i * 37 + salt * 11 + 5) % 256);
const engine = (kvBlocks = 64) => new ReferenceEngine(cpuBackend(), [syntheticWeightsFor(MODEL)], kvBlocks);

async function generate(sut: ReferenceEngine, seqId: string, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await sut.decode([seqId]))[0]!.token);
  return out;
}

/** Logits of every row of `tokens` computed from scratch, without any cache. */
async function fresh(tokens: number[]): Promise<Float32Array> {
  const sut = engine();
  sut.openSequence('fresh', MODEL, GREEDY);
  const [r] = await sut.step([{ seqId: 'fresh', tokens, logits: 'all' }]);
  await sut.close();
  return r!.logits;
}

describe('ReferenceEngine prefix cache', () => {
  it('the next turn starts from the cached prompt and reply and gives bit-identical logits', async () => {
    const sut = engine();
    const [first] = await sut.prefill([{ seqId: 't1', model: MODEL, tokens: toks(40), sampling: GREEDY, cacheSalt: 'tenant' }]);
    const reply = [first!.token, ...(await generate(sut, 't1', 19))];
    sut.release('t1');
    // The next prompt repeats the history (as a chat template does) and adds a new user turn.
    const turn2 = [...toks(40), ...reply, ...toks(12, 3)];
    expect(sut.cachedTokens({ seqId: 'x', model: MODEL, tokens: turn2, sampling: GREEDY, cacheSalt: 'tenant' })).toBe(48);

    sut.openSequence('t2', MODEL, GREEDY, 'tenant');
    const hit = sut.attachCachedPrefix('t2', turn2);
    // KV held prompt + all but the last reply token: 59 tokens → 3 whole blocks.
    expect(hit).toBe(48);
    const [r] = await sut.step([{ seqId: 't2', tokens: turn2.slice(hit), logits: 'all' }]);
    const V = sut.modelConfig(MODEL).vocab;
    expect(bits(r!.logits)).toEqual(bits((await fresh(turn2)).slice(hit * V)));
    expect(sut.stats().cachedTokens).toBe(48);
    await sut.close();
  });

  it('prefill reports cached tokens and computes only the rest', async () => {
    const sut = engine();
    await sut.prefill([{ seqId: 'a', model: MODEL, tokens: toks(70), sampling: GREEDY, cacheSalt: 's' }]);
    sut.release('a');
    const before = sut.stats().prefillTokens;
    const [out] = await sut.prefill([{ seqId: 'b', model: MODEL, tokens: toks(70), sampling: GREEDY, cacheSalt: 's' }]);
    expect(out!.cachedTokens).toBe(64);
    expect(sut.stats().prefillTokens - before).toBe(6);
    await sut.close();
  });

  it.each([
    ['another tenant salt', 'other'],
    ['no salt (the sequence does not share)', undefined],
  ])('isolates: %s finds nothing', async (_name, salt) => {
    const sut = engine();
    await sut.prefill([{ seqId: 'a', model: MODEL, tokens: toks(70), sampling: GREEDY, cacheSalt: 's' }]);
    sut.release('a');
    const [out] = await sut.prefill([{ seqId: 'b', model: MODEL, tokens: toks(70), sampling: GREEDY, cacheSalt: salt }]);
    expect(out!.cachedTokens).toBe(0);
    await sut.close();
  });

  it('counts cached blocks as available, not used, and reclaims them when memory is needed', async () => {
    const sut = engine(8);
    await sut.prefill([{ seqId: 'a', model: MODEL, tokens: toks(100), sampling: GREEDY, cacheSalt: 's' }]);
    expect(sut.kvUsage()).toBe(7 / 8);
    sut.release('a');
    expect(sut.kvUsage()).toBe(0);
    expect(sut.kvBudget(MODEL)).toEqual({ capacity: 8, available: 8 });
    // 'a' left 6 named blocks cached and its partial 7th free. A prompt needing 5 blocks takes the
    // 2 free ones and the 3 oldest cached — the tail of 'a', so its head stays a usable prefix.
    await sut.prefill([{ seqId: 'b', model: MODEL, tokens: toks(70, 9), sampling: GREEDY, cacheSalt: 's' }]);
    expect(sut.cachedTokens({ seqId: 'q', model: MODEL, tokens: toks(100), sampling: GREEDY, cacheSalt: 's' })).toBe(48);
    await sut.close();
  });

  it('prefillBlocks and decodeBlocks count what the next call takes', async () => {
    const sut = engine();
    const input = { seqId: 'a', model: MODEL, tokens: toks(40), sampling: GREEDY, cacheSalt: 's' };
    expect(sut.prefillBlocks(input)).toBe(3);
    await sut.prefill([input]);
    expect(sut.decodeBlocks(['a'])).toBe(0); // 40 tokens, room for 8 more in the third block
    await generate(sut, 'a', 8);
    expect(sut.decodeBlocks(['a'])).toBe(1);
    const again = { ...input, seqId: 'b' };
    expect(sut.prefillBlocks(again)).toBe(1);
    await sut.prefill([again]);
    expect(sut.exclusiveBlocks('b')).toBe(1);
    expect(sut.exclusiveBlocks('a')).toBe(1);
    await sut.close();
  });
});

describe('ReferenceEngine preemption', () => {
  it.each([
    ['greedy', GREEDY],
    ['seeded sampling (the sampler state survives)', SAMPLED],
  ])('%s: a sequence preempted and resumed twice decodes exactly what an uninterrupted one does', async (_name, sampling) => {
    const ref = engine();
    const [r0] = await ref.prefill([{ seqId: 'x', model: MODEL, tokens: toks(30), sampling, cacheSalt: 's' }]);
    const expected = [r0!.token, ...(await generate(ref, 'x', 30))];
    const expectedKv = ref.exportKv('x', { layerStart: 0, layerEnd: 4, tokenStart: 0, tokenEnd: 60 });

    const sut = engine(8);
    const [s0] = await sut.prefill([{ seqId: 'x', model: MODEL, tokens: toks(30), sampling, cacheSalt: 's' }]);
    const got = [s0!.token, ...(await generate(sut, 'x', 10))];
    sut.preempt('x');
    expect(sut.kvUsage()).toBe(0);
    await expect(sut.decode(['x'])).rejects.toMatchObject({ code: 'invalid_request' });
    // 40 tokens in 3 blocks: two whole ones are still cached, but holding them takes them from the pool too.
    expect(sut.resumeBlocks('x')).toBe(3);
    expect(sut.cachedTokens({ seqId: 'q', model: MODEL, tokens: [...toks(30), ...got.slice(0, 10), 0], sampling, cacheSalt: 's' })).toBe(
      32,
    );
    await sut.resume(['x']);
    got.push(...(await generate(sut, 'x', 10)));
    sut.preempt('x');
    // Another sequence takes every block: the cached history is gone, resume recomputes it all.
    await sut.prefill([{ seqId: 'filler', model: MODEL, tokens: toks(120, 5), sampling: GREEDY, cacheSalt: 's' }]);
    sut.release('filler');
    expect(sut.resumeBlocks('x')).toBe(4);
    await sut.resume(['x']);
    got.push(...(await generate(sut, 'x', 10)));
    expect(got).toEqual(expected);
    expect(bits(sut.exportKv('x', { layerStart: 0, layerEnd: 4, tokenStart: 0, tokenEnd: 60 }))).toEqual(bits(expectedKv));
    expect(sut.stats().preemptions).toBe(2);
    await ref.close();
    await sut.close();
  });

  it('a sequence without a salt resumes by recomputing everything', async () => {
    const sut = engine();
    await sut.prefill([{ seqId: 'x', model: MODEL, tokens: toks(40), sampling: GREEDY }]);
    sut.preempt('x');
    expect(sut.resumeBlocks('x')).toBe(3);
    await sut.resume(['x']);
    expect(sut.sequenceLength('x')).toBe(40);
    await sut.close();
  });
});
