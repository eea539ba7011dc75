import { DEFAULT_SIM_COST, decodeCostMs, prefillCostMs, validateSimCost, type SimCostModel } from './sim-cost.model.js';

const cost: SimCostModel = { prefillBaseMs: 1, prefillPerTokenMs: 0.5, decodeBaseMs: 4, decodePerSeqMs: 1, decodePerKContextMs: 2, restorePerChunkMs: 0 };

describe(prefillCostMs.name, () => {
  it.each<[string, number[], number]>([
    ['empty batch costs nothing', [], 0],
    ['one prompt', [10], 1 + 5],
    ['a batch pays the base once', [10, 30], 1 + 20],
  ])('%s', (_n, lengths, expected) => {
    expect(prefillCostMs(cost, lengths)).toBeCloseTo(expected, 9);
  });
});

describe(decodeCostMs.name, () => {
  it.each<[string, number[], number]>([
    ['empty batch costs nothing', [], 0],
    ['one sequence', [1000], 4 + 1 + 2],
    ['grows with batch size', [1000, 1000], 4 + 2 + 4],
    ['grows with context', [3000], 4 + 1 + 6],
  ])('%s', (_n, lengths, expected) => {
    expect(decodeCostMs(cost, lengths)).toBeCloseTo(expected, 9);
  });

  it('makes a batched step cheaper than the same sequences one by one', () => {
    const batched = decodeCostMs(DEFAULT_SIM_COST, [100, 100, 100, 100]);
    const alone = 4 * decodeCostMs(DEFAULT_SIM_COST, [100]);
    expect(batched).toBeLessThan(alone);
  });
});

describe(validateSimCost.name, () => {
  it('lists every bad field', () => {
    expect(() => validateSimCost({ ...cost, decodeBaseMs: -1, prefillPerTokenMs: Number.NaN })).toThrow(/prefillPerTokenMs=NaN.*decodeBaseMs=-1|decodeBaseMs=-1.*prefillPerTokenMs=NaN/);
  });
  it('accepts zero costs', () => {
    expect(validateSimCost({ ...cost, decodeBaseMs: 0 })).toBeDefined();
  });
});
