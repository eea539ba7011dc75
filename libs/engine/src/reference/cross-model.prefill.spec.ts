import type { ReusePattern } from '@mnemo/kv-core';
import { bits } from '../../test/bits.js';
import { cpuBackend } from '../../test/test-backend.js';
import type { CrossModelPlan, PrefillInput } from '../engine.interface.js';
import { syntheticWeightsFor } from '../weights/synthetic-weights.generator.js';
import { ReferenceEngine } from './reference.engine.js';

const GREEDY = { temperature: 0, topP: 1, seed: 0 };
const BASE = 'mnemo-tiny';
const FT = 'mnemo-tiny-ft';
const L = 4;
const tokens = Array.from({ length: 45 }, (_, i) => (i * 53 + 7) % 256);
const UNTIL = 32;
const kvOf = (sut: ReferenceEngine, seqId: string, l: number, end = UNTIL) =>
  sut.exportKv(seqId, { layerStart: l, layerEnd: l + 1, tokenStart: 0, tokenEnd: end });

/** The base model's KV of the prompt, from a full prefill of it in `sut`. */
async function baseKv(sut: ReferenceEngine): Promise<(l: number) => Float32Array> {
  sut.openSequence('base', BASE, GREEDY);
  await sut.step([{ seqId: 'base', tokens }]);
  return (l) => kvOf(sut, 'base', l);
}

function plan(kv: (l: number) => Float32Array, pattern: ReusePattern, log: string[] = []): CrossModelPlan {
  return { baseModel: BASE, pattern, until: UNTIL, load: async (l) => (log.push(`kv${l}`), kv(l)), done: (ok) => log.push(`done:${ok}`) };
}

const input = (seqId: string, crossModel?: PrefillInput['crossModel']): PrefillInput => ({
  seqId,
  model: FT,
  tokens,
  sampling: GREEDY,
  cacheSalt: 't',
  ...(crossModel ? { crossModel } : {}),
});

async function decodeN(sut: ReferenceEngine, seqId: string, first: number, n: number): Promise<number[]> {
  const out = [first];
  for (let i = 1; i < n; i++) out.push((await sut.decode([seqId]))[0]!.token);
  return out;
}

describe('ReferenceEngine cross-model prefill', () => {
  let sut: ReferenceEngine;
  let manual: ReferenceEngine;
  beforeEach(() => {
    sut = new ReferenceEngine(cpuBackend(), [syntheticWeightsFor(BASE), syntheticWeightsFor(FT)], 64);
    manual = new ReferenceEngine(cpuBackend(), [syntheticWeightsFor(BASE), syntheticWeightsFor(FT)], 64);
  });
  afterEach(async () => {
    await sut.close();
    await manual.close();
  });

  it.each<[string, ReusePattern]>([
    ['reuse the top layers', { r1: 0, u1: 0, r2: 2 }],
    ['reuse the bottom layers as queries', { r1: 1, u1: L, r2: L }],
  ])('%s: tokens and KV equal runPartialPrefill of the prefix, then an ordinary prefill of the rest', async (_, pattern) => {
    const kv = await baseKv(sut);
    const log: string[] = [];
    const [out] = await sut.prefill([input('d', () => plan(kv, pattern, log))]);
    expect(out!.crossModel).toEqual({ baseModel: BASE, pattern, reusedTokens: UNTIL });
    expect(out!.cachedTokens).toBe(0);
    expect(log.at(-1)).toBe('done:true');
    const got = await decodeN(sut, 'd', out!.token, 6);

    const mkv = await baseKv(manual);
    await manual.partialPrefill(FT, GREEDY, { seqId: 'd', tokens: tokens.slice(0, UNTIL), pattern, fetchKv: mkv });
    const [rest] = await manual.step([{ seqId: 'd', tokens: tokens.slice(UNTIL) }]);
    const want = await decodeN(manual, 'd', manual.sample('d', rest!.logits), 6);
    expect(got).toEqual(want);
    // Reused layers hold the base's KV, bit for bit.
    for (let l = 0; l < L; l++) {
      const reused = l >= pattern.r2 || (l >= pattern.r1 && l < pattern.u1);
      if (reused) expect(bits(kvOf(sut, 'd', l))).toEqual(bits(kv(l)));
      expect(bits(kvOf(sut, 'd', l, tokens.length))).toEqual(bits(kvOf(manual, 'd', l, tokens.length)));
    }
  });

  it('returns the E caches a base prefill was asked for, and a plan with a transition layer runs over them', async () => {
    const [b] = await sut.prefill([{ seqId: 'b', model: BASE, tokens, sampling: GREEDY, cacheSalt: 't', captureE: [1, 2] }]);
    manual.openSequence('b', BASE, GREEDY);
    const [ref] = await manual.step([{ seqId: 'b', tokens }], { captureLayers: [1, 2] });
    expect([...b!.eCache!.keys()].sort()).toEqual([1, 2]);
    for (const l of [1, 2]) expect(bits(b!.eCache!.get(l)!)).toEqual(bits(ref!.eCache.get(l)!));
    // A prompt with a cached prefix has no E cache to give.
    const [again] = await sut.prefill([{ seqId: 'b2', model: BASE, tokens, sampling: GREEDY, cacheSalt: 't', captureE: [1] }]);
    expect(again!.eCache).toBeUndefined();

    const pattern = { r1: 0, u1: 1, r2: 3 };
    const kv = (l: number) => kvOf(sut, 'b', l);
    const e = (l: number) => b!.eCache!.get(l)!.slice(0, UNTIL * sut.modelConfig(BASE).dModel);
    const [out] = await sut.prefill([input('d', () => ({ ...plan(kv, pattern), loadE: async (l) => e(l) }))]);
    expect(out!.crossModel).toEqual({ baseModel: BASE, pattern, reusedTokens: UNTIL });
    await manual.partialPrefill(FT, GREEDY, {
      seqId: 'd',
      tokens: tokens.slice(0, UNTIL),
      pattern,
      fetchKv: (l) => kvOf(manual, 'b', l),
      fetchE: e,
    });
    const [rest] = await manual.step([{ seqId: 'd', tokens: tokens.slice(UNTIL) }]);
    expect(await decodeN(sut, 'd', out!.token, 6)).toEqual(await decodeN(manual, 'd', manual.sample('d', rest!.logits), 6));
  });

  it('keeps the approximate KV out of the prefix cache: a later request of the model gets no hit from it', async () => {
    const kv = await baseKv(sut);
    await sut.prefill([input('d', () => plan(kv, { r1: 0, u1: 0, r2: 2 }))]);
    expect(sut.cachedTokens(input('again'))).toBe(0);
  });

  it.each<[string, (kv: (l: number) => Float32Array) => CrossModelPlan]>([
    ['an unknown base', (kv) => ({ ...plan(kv, { r1: 0, u1: 0, r2: 2 }), baseModel: 'nope' })],
    ['a bad pattern', (kv) => plan(kv, { r1: 3, u1: 1, r2: 2 })],
    ['a prefix covering the whole prompt', (kv) => ({ ...plan(kv, { r1: 0, u1: 0, r2: 2 }), until: tokens.length })],
    ['a transition layer without an E cache', (kv) => plan(kv, { r1: 0, u1: 1, r2: 3 })],
  ])('declines %s and runs an ordinary prefill, equal to one without a plan', async (_, bad) => {
    const kv = await baseKv(sut);
    const [out] = await sut.prefill([input('d', () => bad(kv))]);
    expect(out!.crossModel).toBeUndefined();
    const [own] = await manual.prefill([input('d')]);
    expect(await decodeN(sut, 'd', out!.token, 6)).toEqual(await decodeN(manual, 'd', own!.token, 6));
  });
});
