import {
  attendedTokens,
  DEFAULT_SIM_COST,
  decodeCostMs,
  decodeStepMs,
  prefillCostMs,
  prefillStepMs,
  validateSimCost,
  type SimCostModel,
} from './sim-cost.model.js';

const cost: SimCostModel = {
  prefillBaseMs: 1,
  prefillPerTokenMs: 0.5,
  decodeBaseMs: 4,
  decodePerSeqMs: 1,
  decodePerKContextMs: 2,
  restorePerChunkMs: 0,
};

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
    expect(() => validateSimCost({ ...cost, decodeBaseMs: -1, prefillPerTokenMs: Number.NaN })).toThrow(
      /prefillPerTokenMs=NaN.*decodeBaseMs=-1|decodeBaseMs=-1.*prefillPerTokenMs=NaN/,
    );
  });
  it('accepts zero costs', () => {
    expect(validateSimCost({ ...cost, decodeBaseMs: 0 })).toBeDefined();
  });
});

describe('scalar step costs', () => {
  const withAttention: SimCostModel = { ...cost, restorePerChunkMs: 0, prefillPerKContextMs: 0.5 };
  it.each<[string, number, number, number]>([
    ['no attention term: linear in the tokens', 10, 0, 1 + 5],
    ['attention: per computed token per 1000 attended', 10, 2000, 1 + 5 + 1],
  ])('%s', (_n, tokens, attended, expected) => {
    expect(prefillStepMs(withAttention, tokens, attended)).toBeCloseTo(expected, 9);
  });

  it.each<[number, number, number]>([
    [0, 4, 0 + 1 + 2 + 3],
    [2, 4, 2 + 3],
    [4, 4, 0],
  ])('tokens [%i, %i) attend to %i positions', (from, to, want) => {
    expect(attendedTokens(from, to)).toBe(want);
  });

  it('prices a batch as the list forms do', () => {
    expect(decodeStepMs(cost, 2, 2000)).toBeCloseTo(decodeCostMs(cost, [1000, 1000]), 9);
    expect(prefillStepMs(cost, 40)).toBeCloseTo(prefillCostMs(cost, [10, 30]), 9);
    expect(decodeStepMs(cost, 0, 0)).toBe(0);
  });
});
