import { PassCostModel, type PrefillPass } from './pass-cost.model.js';

const prior = { recompute: 16, host: 1.4, ssd: 5.5, peer: 2.7 };
const chunks = (n: number) => n * 256;
/** A node whose pass costs 3 ms + 20 per computed chunk + 2 per host chunk + 8 per SSD chunk + 5 per peer chunk. */
const truth = (c: number, h: number, s: number, p: number): PrefillPass => ({
  ms: 3 + 20 * c + 2 * h + 8 * s + 5 * p,
  computedTokens: chunks(c),
  hostTokens: chunks(h),
  ssdTokens: chunks(s),
  peerTokens: chunks(p),
});
const MIX: Array<[number, number, number, number]> = [
  [4, 0, 0, 0],
  [1, 6, 0, 0],
  [2, 0, 5, 0],
  [1, 2, 0, 7],
  [8, 1, 1, 1],
  [0.5, 3, 2, 0],
];

describe(PassCostModel.name, () => {
  it('reports nothing before any pass', () => {
    expect(new PassCostModel({ prior }).costs()).toEqual({});
  });

  it('learns each term from mixed passes', () => {
    const m = new PassCostModel({ prior });
    for (let round = 0; round < 10; round++) for (const x of MIX) m.observe(truth(...x));
    const c = m.costs();
    expect(c.recomputeMsPerChunk).toBeCloseTo(20, 0);
    expect(c.loadMsPerChunk?.host).toBeCloseTo(2, 0);
    expect(c.loadMsPerChunk?.ssd).toBeCloseTo(8, 0);
    expect(c.peerMsPerChunk).toBeCloseTo(5, 0);
  });

  it.each<[string, Array<[number, number, number, number]>, string[]]>([
    ['only computed passes: recompute alone is reported', [[4, 0, 0, 0]], ['recomputeMsPerChunk']],
    [
      'host restores too',
      [
        [4, 0, 0, 0],
        [1, 6, 0, 0],
      ],
      ['recomputeMsPerChunk', 'loadMsPerChunk'],
    ],
  ])('%s', (_name, mix, keys) => {
    const m = new PassCostModel({ prior });
    for (let round = 0; round < 10; round++) for (const x of mix) m.observe(truth(...x));
    expect(Object.keys(m.costs()).sort()).toEqual(keys.sort());
  });

  it('forgets: a node that slows down is followed', () => {
    const m = new PassCostModel({ prior });
    for (let i = 0; i < 50; i++) m.observe({ ms: 16 * 4, computedTokens: chunks(4), hostTokens: 0, ssdTokens: 0, peerTokens: 0 });
    for (let i = 0; i < 150; i++) m.observe({ ms: 40 * 4, computedTokens: chunks(4), hostTokens: 0, ssdTokens: 0, peerTokens: 0 });
    expect(m.costs().recomputeMsPerChunk).toBeGreaterThan(36);
  });

  it('bounds a wild figure around the prior', () => {
    const m = new PassCostModel({ prior, bound: 4 });
    for (let i = 0; i < 30; i++) m.observe({ ms: 100_000, computedTokens: chunks(2), hostTokens: 0, ssdTokens: 0, peerTokens: 0 });
    expect(m.costs().recomputeMsPerChunk).toBe(64);
  });

  it.each<[string, PrefillPass]>([
    ['negative time', { ms: -1, computedTokens: 256, hostTokens: 0, ssdTokens: 0, peerTokens: 0 }],
    ['NaN tokens', { ms: 5, computedTokens: NaN, hostTokens: 0, ssdTokens: 0, peerTokens: 0 }],
    ['no tokens at all', { ms: 5, computedTokens: 0, hostTokens: 0, ssdTokens: 0, peerTokens: 0 }],
  ])('ignores a pass with %s', (_name, pass) => {
    const m = new PassCostModel({ prior });
    m.observe(pass);
    expect(m.observed).toBe(0);
  });

  it('refuses bad options', () => {
    expect(() => new PassCostModel({ prior, decay: 0 })).toThrow(RangeError);
    expect(() => new PassCostModel({ prior: { ...prior, host: 0 } })).toThrow(RangeError);
  });
});
