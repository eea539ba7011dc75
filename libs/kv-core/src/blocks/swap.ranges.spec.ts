import { countSwapRanges, planSwapRanges, reusedSwapBlocks } from './swap.ranges.js';

const r = (deviceBlock: number, segment: number, segmentBlock: number, offset: number, length: number) => ({
  deviceBlock,
  segment,
  segmentBlock,
  offset,
  length,
});

describe(planSwapRanges.name, () => {
  it.each([
    ['one contiguous group → one copy', [4, 5, 6, 7], 0, 8, [r(4, 0, 0, 0, 16)]],
    ['a gap in the ids splits the copy', [4, 5, 9, 10], 0, 8, [r(4, 0, 0, 0, 8), r(9, 0, 2, 0, 8)]],
    ['ids out of order split too', [5, 4], 0, 8, [r(5, 0, 0, 0, 4), r(4, 0, 1, 0, 4)]],
    ['a host segment boundary splits the copy', [0, 1, 2, 3], 0, 3, [r(0, 0, 0, 0, 12), r(3, 1, 0, 0, 4)]],
    ['reuse: only blocks from `from` on', [0, 1, 2, 3], 2, 8, [r(2, 0, 2, 0, 8)]],
    ['nothing new → nothing copied', [0, 1], 2, 8, []],
  ])('grouped: %s', (_name, physical, from, segmentBlocks, ranges) => {
    expect(planSwapRanges(physical, from, segmentBlocks, 4, 1, 'grouped')).toEqual(ranges);
  });

  it('per-block: one copy per block, layer and K/V, whatever the contiguity', () => {
    const ranges = planSwapRanges([4, 5], 0, 8, 8, 2, 'per-block');
    expect(ranges).toEqual([0, 2, 4, 6].map((o) => r(4, 0, 0, o, 2)).concat([0, 2, 4, 6].map((o) => r(5, 0, 1, o, 2))));
  });

  it.each([
    ['segmentBlocks 0', () => planSwapRanges([0], 0, 0, 4, 1, 'grouped')],
    ['a block that does not split into layers', () => planSwapRanges([0], 0, 1, 6, 2, 'grouped')],
  ])('rejects %s', (_name, act) => {
    expect(act).toThrow(RangeError);
  });
});

describe(reusedSwapBlocks.name, () => {
  it.each([
    ['no host copy', undefined, 40, 0],
    ['the full blocks of the last copy', 40, 70, 2],
    ['a copy of whole blocks', 48, 48, 3],
    ['a copy longer than the sequence: other content', 50, 40, 0],
  ])('%s', (_name, copied, tokens, blocks) => {
    expect(reusedSwapBlocks(copied, tokens, 16)).toBe(blocks);
  });
});

describe(countSwapRanges.name, () => {
  it.each([
    ['one group', [4, 5, 6, 7], 0, 8],
    ['a gap', [4, 5, 9, 10], 0, 8],
    ['out of order', [5, 4], 0, 8],
    ['a segment boundary', [0, 1, 2, 3], 0, 3],
    ['reuse', [0, 1, 2, 3], 2, 8],
    ['nothing new', [0, 1], 2, 8],
    ['a boundary after the reused part', [7, 8, 9, 10, 11], 1, 2],
  ])('counts what planSwapRanges cuts: %s', (_name, physical, from, segmentBlocks) => {
    for (const g of ['grouped', 'per-block'] as const)
      expect(countSwapRanges(physical, from, segmentBlocks, 2, g)).toBe(planSwapRanges(physical, from, segmentBlocks, 8, 2, g).length);
  });
});
