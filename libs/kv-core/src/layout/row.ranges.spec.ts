import { pushRowRanges } from './row.ranges.js';

/** 4 positions of rows of 2 floats (8 bytes): the payload `[K|V][4][2]`, 16 floats. */
const N = 4;
const ROW = 2;

describe(pushRowRanges.name, () => {
  it.each<[string, { dst: number; len: number }, number[], number[], number[][]]>([
    ['K rows adjacent in the cache: one range', { dst: 0, len: 8 }, [100, 108, 116, 124], [0, 0, 0, 0], [[7, 40, 0, 100, 32]]],
    ['V rows from the second half', { dst: 8, len: 8 }, [0, 0, 0, 0], [200, 208, 216, 224], [[7, 40, 0, 200, 32]]],
    [
      'a gap between blocks: two ranges',
      { dst: 0, len: 8 },
      [100, 108, 500, 508],
      [0, 0, 0, 0],
      [
        [7, 40, 0, 100, 16],
        [7, 56, 0, 500, 16],
      ],
    ],
    [
      'a position not restored there: skipped',
      { dst: 0, len: 8 },
      [100, -1, 116, 124],
      [0, 0, 0, 0],
      [
        [7, 40, 0, 100, 8],
        [7, 56, 0, 116, 16],
      ],
    ],
    ['part of the K half, from its second position', { dst: 2, len: 4 }, [100, 108, 116, 124], [0, 0, 0, 0], [[7, 40, 0, 108, 16]]],
    [
      'rows out of order: one range each',
      { dst: 0, len: 4 },
      [108, 100, 0, 0],
      [0, 0, 0, 0],
      [
        [7, 40, 0, 108, 8],
        [7, 48, 0, 100, 8],
      ],
    ],
  ])('%s', (_, piece, kOffsets, vOffsets, want) => {
    const ranges: number[] = [];
    pushRowRanges(ranges, 7, 40, piece.dst, piece.len, N, ROW, { kOffsets, vOffsets });
    const got: number[][] = [];
    for (let i = 0; i < ranges.length; i += 5) got.push(ranges.slice(i, i + 5));
    expect(got).toEqual(want);
  });
});
