import { attentionChunkPairs, recomputeSpanMs } from './prefill.cost.js';

describe(recomputeSpanMs.name, () => {
  const costs = { recomputeMsPerChunk: 20, attentionMsPerChunkPair: 0.5 };
  it.each<[string, Partial<typeof costs> & { recomputeMsPerChunk: number }, number, number, number]>([
    ['no attention figure: linear in chunks', { recomputeMsPerChunk: 20 }, 0, 10, 200],
    ['one chunk from scratch', costs, 0, 1, 20 + 0.25],
    ['ten chunks from scratch: 20·10 + 0.5·100/2', costs, 0, 10, 225],
    ['the same ten chunks after 90 cached: attention over the cache too', costs, 90, 100, 200 + (0.5 * (10_000 - 8_100)) / 2],
    ['a partial chunk', costs, 4, 4.5, 10 + (0.5 * (20.25 - 16)) / 2],
    ['nothing to compute', costs, 7, 7, 0],
    ['an empty span the wrong way round', costs, 8, 7, 0],
  ])('%s', (_name, c, from, to, want) => {
    expect(recomputeSpanMs(c, from, to)).toBeCloseTo(want, 9);
  });

  it('is additive: a prompt prefilled in two spans costs what it costs in one', () => {
    expect(recomputeSpanMs(costs, 0, 30) + recomputeSpanMs(costs, 30, 75)).toBeCloseTo(recomputeSpanMs(costs, 0, 75), 9);
  });
});

describe(attentionChunkPairs.name, () => {
  it.each<[string, number, number, number]>([
    ['one chunk from scratch: every token over those before it and itself', 256, 0, (256 * 257) / 2 / 65_536],
    ['one chunk after one cached', 512, 256, (256 * 256 + (256 * 257) / 2) / 65_536],
    ['all cached', 512, 512, 0],
    ['cached past the prompt (clamped)', 512, 900, 0],
    ['a negative cached count (clamped)', 256, -5, (256 * 257) / 2 / 65_536],
  ])('%s', (_name, prompt, cached, want) => {
    expect(attentionChunkPairs(prompt, cached)).toBeCloseTo(want, 9);
  });
});
