import { blockElements, gcd, layerStreamSplit, lcm, minimumElasticUnit, streamedContextPlan, type KvShape } from './elastic-unit.math.js';

const shape = (layers: number, kvHeads: number, headDim: number, blockTokens = 16): KvShape => ({ layers, kvHeads, headDim, blockTokens });

describe('elastic unit math', () => {
  it.each([
    ['coprime', 4, 9, 1, 36],
    ['one divides the other', 6, 12, 6, 12],
    ['equal', 7, 7, 7, 7],
    ['common factor', 12, 18, 6, 36],
  ])('gcd/lcm: %s', (_n, a, b, g, l) => {
    expect(gcd(a, b)).toBe(g);
    expect(lcm(a, b)).toBe(l);
  });

  it.each([
    // name, master, worker, LCM elements, MEU_m, MEU_i
    ['same shape: one block each', shape(2, 2, 16), shape(2, 2, 16), 2048, 1, 1],
    ['worker twice as many layers', shape(2, 2, 16), shape(4, 2, 16), 4096, 2, 1],
    ['3 vs 2 layers (Eq. 8–9)', shape(3, 2, 16), shape(2, 2, 16), 6144, 2, 3],
    ['Qwen3-8B master vs Qwen3-14B worker', shape(36, 8, 128), shape(40, 8, 128), 2 * 16 * 8 * 128 * 360, 10, 9],
  ])('MEU: %s', (_n, m, w, elements, meuM, meuW) => {
    const sut = minimumElasticUnit(m, w);
    expect(sut).toEqual({ elements, masterBlocks: meuM, workerBlocks: meuW });
    expect(sut.masterBlocks * blockElements(m)).toBe(sut.workerBlocks * blockElements(w));
  });

  it.each([
    ['zero layers', shape(0, 2, 16)],
    ['fractional heads', shape(2, 1.5, 16)],
    ['negative head dim', shape(2, 2, -16)],
  ])('rejects a bad shape: %s', (_n, s) => {
    expect(() => blockElements(s)).toThrow(RangeError);
  });

  // The paper's example (§3.2): L = 10, K_master = 100, K_1 = 9, K_2 = 8 → LSC 17, RC 8, 25 blocks.
  const m = shape(10, 1, 1, 1);
  const layerBlock = 2;
  it.each([
    ['paper example', 100 * layerBlock, [9 * 10 * layerBlock, 8 * 10 * layerBlock], 17, 8, 25],
    ['no lenders: regular cache only', 100 * layerBlock, [], 0, 10, 10],
    ['lenders exceed local memory: LSC takes it all', 50 * layerBlock, [100 * 10 * layerBlock], 50, 0, 50],
    ['partial full blocks are floored', 100 * layerBlock + 1, [9 * 10 * layerBlock + 19], 9, 9, 18],
  ])('layer stream split: %s', (_n, local, lent, lsc, rc, ctx) => {
    const sut = layerStreamSplit(m, local, lent);
    expect([sut.streamBlocks, sut.regularBlocks, sut.maxContextTokens]).toEqual([lsc, rc, ctx]);
  });

  // L = 6, one single-layer block = 2 elements; K single-layer blocks of local memory.
  const six = shape(6, 1, 1, 1);
  it.each([
    // name, K, lent, window, context, regular, lent used
    ['no lenders: window + all layers per regular block', 48, 0, 2, 6, 6, 0],
    ['lenders fill what the planes leave', 48, 16, 2, 18, 2, 16],
    ['lenders beyond the planes: planes are the limit', 48, 40, 2, 24, 0, 24],
    ['window 1 (the paper’s single active layer)', 60, 20, 1, 25, 5, 20],
    ['nothing local: nothing streams', 0, 10, 2, 0, 0, 0],
  ])('streamed context plan: %s', (_n, K, lent, window, ctx, regular, lentUsed) => {
    const sut = streamedContextPlan(six, K * 2, lent, window);
    expect([sut.contextBlocks, sut.regularBlocks, sut.lentBlocks]).toEqual([ctx, regular, lentUsed]);
    expect(sut.localElements).toBeLessThanOrEqual(K * 2);
  });
});
