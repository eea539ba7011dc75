import { ErrorCode, planReuse, recomputeAll, type ReusePattern } from '@mnemo/kv-core';
import { bits } from '../../test/bits.js';
import { cpuBackend } from '../../test/test-backend.js';
import { findSyntheticModel } from '../model/model.catalog.js';
import { syntheticWeightsFor } from '../weights/synthetic-weights.generator.js';
import { ReferenceEngine } from './reference.engine.js';

const GREEDY = { temperature: 0, topP: 1, seed: 0 };
const BASE = 'mnemo-tiny';
const FT = 'mnemo-tiny-ft';
const tokens = Array.from({ length: 29 }, (_, i) => (i * 53 + 7) % 256);

/** Everything a partial prefill could fetch, taken from a full prefill of `model`. */
async function source(sut: ReferenceEngine, model: string, seqId: string) {
  const L = sut.modelConfig(model).layers;
  sut.openSequence(seqId, model, GREEDY);
  const [r] = await sut.step([{ seqId, tokens, logits: 'all' }], { captureLayers: [...Array(L + 1).keys()] });
  const kv = (l: number) => sut.exportKv(seqId, { layerStart: l, layerEnd: l + 1, tokenStart: 0, tokenEnd: tokens.length });
  return {
    logits: r.logits,
    eCache: r.eCache,
    kv,
    all: sut.exportKv(seqId, { layerStart: 0, layerEnd: L, tokenStart: 0, tokenEnd: tokens.length }),
  };
}

describe('partial prefill (DroidSpeak)', () => {
  let sut: ReferenceEngine;
  const L = findSyntheticModel(FT)!.config.layers;
  const firstPerturbed = Math.min(...findSyntheticModel(FT)!.derivedFrom!.layers);
  const V = findSyntheticModel(FT)!.config.vocab;

  beforeEach(async () => {
    sut = new ReferenceEngine(cpuBackend(), [syntheticWeightsFor(BASE), syntheticWeightsFor(FT)], 64);
  });
  afterEach(() => sut.close());

  it('recompute-everything is bit-identical to a full prefill (logits and KV)', async () => {
    const own = await source(sut, FT, 'full');
    const r = await sut.partialPrefill(FT, GREEDY, {
      seqId: 'p',
      tokens,
      pattern: recomputeAll(L),
      fetchKv: () => {
        throw new Error('nothing is reused');
      },
      logits: 'all',
    });
    expect(bits(r.logits)).toEqual(bits(own.logits));
    expect(bits(sut.exportKv('p', { layerStart: 0, layerEnd: L, tokenStart: 0, tokenEnd: tokens.length }))).toEqual(bits(own.all));
  });

  it("reusing the base's KV below the first perturbed layer (E cache at it) is bit-identical to the derived prefill", async () => {
    const base = await source(sut, BASE, 'base');
    const own = await source(sut, FT, 'ft');
    const fetched: string[] = [];
    const r = await sut.partialPrefill(FT, GREEDY, {
      seqId: 'reuse',
      tokens,
      pattern: { r1: 0, u1: firstPerturbed, r2: L },
      fetchKv: (l) => (fetched.push(`kv${l}`), base.kv(l)),
      fetchE: (l) => (fetched.push(`e${l}`), base.eCache.get(l)!),
      logits: 'all',
    });
    expect(fetched.sort()).toEqual(
      [...Array(firstPerturbed).keys()]
        .map((l) => `kv${l}`)
        .concat(`e${firstPerturbed}`)
        .sort(),
    );
    expect(bits(r.logits)).toEqual(bits(own.logits));
    expect(bits(sut.exportKv('reuse', { layerStart: 0, layerEnd: L, tokenStart: 0, tokenEnd: tokens.length }))).toEqual(bits(own.all));
    // The sequence decodes on like any other.
    const [next] = await sut.decode(['reuse']);
    const [ownNext] = await sut.step([{ seqId: 'ft', tokens: [r.token] }]);
    expect(next.token).toBe(ownNext.logits.indexOf(Math.max(...ownNext.logits)));
  });

  it.each<[string, ReusePattern]>([
    ['recompute→reuse→recompute→reuse', { r1: 1, u1: 2, r2: 3 }],
    ['reuse→recompute→reuse', { r1: 0, u1: 1, r2: 3 }],
    ['recompute→reuse (tail carried by the last token)', { r1: 2, u1: 4, r2: 4 }],
    ['reuse everything', { r1: 0, u1: 0, r2: 0 }],
    ['recompute→reuse→recompute', { r1: 1, u1: 3, r2: 4 }],
  ])("%s with the model's own KV and E cache reproduces its own logits exactly", async (_, pattern) => {
    const own = await source(sut, FT, 'ft');
    const r = await sut.partialPrefill(FT, GREEDY, { seqId: 'x', tokens, pattern, fetchKv: own.kv, fetchE: (l) => own.eCache.get(l)! });
    expect(bits(r.logits)).toEqual(bits(own.logits.slice((tokens.length - 1) * V)));
    expect(bits(sut.exportKv('x', { layerStart: 0, layerEnd: L, tokenStart: 0, tokenEnd: tokens.length }))).toEqual(bits(own.all));
  });

  it("reusing the base's KV in perturbed layers is an approximation: close, not equal", async () => {
    const base = await source(sut, BASE, 'base');
    const own = await source(sut, FT, 'ft');
    const r = await sut.partialPrefill(FT, GREEDY, {
      seqId: 'x',
      tokens,
      pattern: { r1: 0, u1: L - 1, r2: L },
      fetchKv: base.kv,
      fetchE: (l) => base.eCache.get(l)!,
    });
    const exact = own.logits.slice((tokens.length - 1) * V);
    expect(r.logits).not.toEqual(exact);
    let diff = 0;
    for (let i = 0; i < V; i++) diff = Math.max(diff, Math.abs(r.logits[i] - exact[i]));
    expect(diff).toBeLessThan(1);
  });

  it('validates patterns and inputs with InvalidRequest', async () => {
    const bad = { code: ErrorCode.InvalidRequest };
    const call = (pattern: ReusePattern, extra: object = {}) =>
      sut.partialPrefill(FT, GREEDY, { seqId: 'v', tokens, pattern, fetchKv: () => new Float32Array(0), ...extra });
    await expect(call({ r1: 2, u1: 1, r2: 3 })).rejects.toMatchObject(bad);
    await expect(call({ r1: 0, u1: 0, r2: L + 1 })).rejects.toMatchObject(bad);
    await expect(call({ r1: -1, u1: 0, r2: 1 })).rejects.toMatchObject(bad);
    await expect(call({ r1: 0.5, u1: 1, r2: 2 })).rejects.toMatchObject(bad);
    await expect(call({ r1: 0, u1: 2, r2: 4 })).rejects.toMatchObject(bad); // needs fetchE
    await expect(call({ r1: 0, u1: 0, r2: 2 }, { logits: 'all' })).rejects.toMatchObject(bad);
    await expect(call({ r1: 0, u1: 2, r2: 4 }, { fetchE: () => new Float32Array(3) })).rejects.toMatchObject(bad);
    expect(sut.hasSequence('v')).toBe(false);
  });

  it('plans actions per layer', () => {
    expect(planReuse({ r1: 1, u1: 2, r2: 3 }, 4)).toEqual({
      actions: ['compute', 'reuse-skip', 'compute', 'reuse-query'],
      eLayer: 2,
      recomputed: 2,
    });
    expect(planReuse({ r1: 2, u1: 4, r2: 4 }, 4)).toEqual({
      actions: ['compute', 'compute', 'reuse-query', 'reuse-query'],
      eLayer: null,
      recomputed: 2,
    });
    expect(planReuse(recomputeAll(3), 3)).toEqual({ actions: ['compute', 'compute', 'compute'], eLayer: null, recomputed: 3 });
  });
});
