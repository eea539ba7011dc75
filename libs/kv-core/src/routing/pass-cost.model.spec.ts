import { PassCostModel, type PrefillPass } from './pass-cost.model.js';
import { attentionChunkPairs } from './prefill.cost.js';

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

  it.each<[string, Array<[number, number, number, number]>, Partial<{ minChunks: number; minPasses: number }>, boolean]>([
    // One pass cannot tell the pass's overhead from its per-chunk cost, however many chunks it holds.
    ['one pass of 26 chunks', [[26, 0, 0, 0]], {}, false],
    ['five passes of 26 chunks (fewer than the six terms)', Array.from({ length: 5 }, () => [26, 0, 0, 0]), {}, false],
    ['six passes of 26 chunks', Array.from({ length: 6 }, () => [26, 0, 0, 0]), {}, true],
    // Past the pass floor, evidence is the fit's information (squared chunks): 16 passes of one chunk, or one of four.
    ['fifteen passes of 1 chunk', Array.from({ length: 15 }, () => [1, 0, 0, 0]), {}, false],
    ['sixteen passes of 1 chunk', Array.from({ length: 16 }, () => [1, 0, 0, 0]), {}, true],
  ])('reports recompute only once enough passes and chunks back it: %s', (_name, passes, o, reported) => {
    const m = new PassCostModel({ prior, decay: 1, ...o });
    for (const x of passes) m.observe(truth(...x));
    expect(m.costs().recomputeMsPerChunk !== undefined).toBe(reported);
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

  it('learns attention from prompts of different lengths: a long prompt is not priced as a row of short ones', () => {
    // 2 ms + 20 per computed chunk + 0.25 per chunk pair (each computed chunk over the context before it).
    const pass = (promptChunks: number, cachedChunks: number): PrefillPass => {
      const pairs = attentionChunkPairs(chunks(promptChunks), chunks(cachedChunks));
      return {
        ms: 2 + 20 * (promptChunks - cachedChunks) + 0.25 * pairs,
        computedTokens: chunks(promptChunks - cachedChunks),
        hostTokens: 0,
        ssdTokens: 0,
        peerTokens: 0,
        attentionChunkPairs: pairs,
      };
    };
    const m = new PassCostModel({ prior });
    for (let round = 0; round < 10; round++)
      for (const [p, c] of [
        [2, 0],
        [16, 0],
        [64, 8],
        [200, 0],
        [120, 100],
      ] as const)
        m.observe(pass(p, c));
    expect(m.costs().recomputeMsPerChunk).toBeCloseTo(20, 0);
    expect(m.costs().attentionMsPerChunkPair).toBeCloseTo(0.25, 2);
  });

  it.each<[string, number, number]>([
    ['a pass slower than its chunks explain: attention at most a quarter of the recompute prior', 1e6, prior.recompute / 4],
    ['a pass faster than its chunks explain: attention never below 0', -1e6, 0],
  ])('%s', (_name, excess, want) => {
    const m = new PassCostModel({ prior });
    for (let round = 0; round < 10; round++)
      for (const [n, pairs] of [
        [4, 10],
        [40, 900],
      ] as const)
        m.observe({
          ms: Math.max(1, 16 * n + (excess * pairs) / 1e4),
          computedTokens: chunks(n),
          hostTokens: 0,
          ssdTokens: 0,
          peerTokens: 0,
          attentionChunkPairs: pairs,
        });
    expect(m.costs().attentionMsPerChunkPair).toBeCloseTo(want, 6);
  });

  describe('with the attention share the node knows from its model', () => {
    // Short passes only (1–4 chunks from scratch): 20 ms per chunk, attention 0.01 of a chunk per chunk pair.
    const short = (m: PassCostModel) => {
      for (let round = 0; round < 10; round++)
        for (const n of [1, 2, 4]) {
          const pairs = attentionChunkPairs(chunks(n), 0);
          m.observe({
            ms: 20 * n + 0.2 * pairs,
            computedTokens: chunks(n),
            hostTokens: 0,
            ssdTokens: 0,
            peerTokens: 0,
            attentionChunkPairs: pairs,
          });
        }
    };

    it.each<[string, number | undefined, number | undefined]>([
      // Without it, short passes cannot back an attention figure: none is reported, and routing prices a long prompt linearly.
      ['no share: no attention figure from short passes', undefined, undefined],
      // With it, the figure is the share of the recompute the passes did back: 0.01 × 20.
      ['share 0.01: attention is that share of the fitted recompute', 0.01, 0.2],
      ['share 0 (an engine without a quadratic term): attention 0', 0, 0],
    ])('%s', (_name, attentionShare, want) => {
      const m = new PassCostModel({ prior, ...(attentionShare !== undefined ? { attentionShare } : {}) });
      short(m);
      const c = m.costs();
      expect(c.recomputeMsPerChunk).toBeCloseTo(20, 0);
      if (want === undefined) expect(c.attentionMsPerChunkPair).toBeUndefined();
      else expect(c.attentionMsPerChunkPair).toBeCloseTo(want, 2);
    });

    it('long passes still outweigh the share: a node whose attention is dearer than its shape says is followed', () => {
      const m = new PassCostModel({ prior, attentionShare: 0.001 });
      const pass = (promptChunks: number): PrefillPass => {
        const pairs = attentionChunkPairs(chunks(promptChunks), 0);
        return {
          ms: 20 * promptChunks + 0.25 * pairs,
          computedTokens: chunks(promptChunks),
          hostTokens: 0,
          ssdTokens: 0,
          peerTokens: 0,
          attentionChunkPairs: pairs,
        };
      };
      for (let round = 0; round < 10; round++) for (const n of [2, 16, 64, 200]) m.observe(pass(n));
      expect(m.costs().attentionMsPerChunkPair).toBeCloseTo(0.25, 2);
    });

    it('refuses a negative or non-finite share', () => {
      expect(() => new PassCostModel({ prior, attentionShare: -0.1 })).toThrow(RangeError);
      expect(() => new PassCostModel({ prior, attentionShare: Number.NaN })).toThrow(RangeError);
    });
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
