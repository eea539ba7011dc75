import {
  blockPosition,
  blocksFor,
  blockTokenRange,
  chunkBlockRange,
  chunksFor,
  chunkTokenRange,
  completeChunks,
  slotMapping,
  slotOf,
} from './block.math.js';

describe(blocksFor.name, () => {
  it.each([
    ['zero tokens', 0, 16, 0],
    ['one token', 1, 16, 1],
    ['exactly one block', 16, 16, 1],
    ['one over a block', 17, 16, 2],
    ['a chunk', 256, 16, 16],
    ['block size 1', 5, 1, 5],
  ])('%s: blocksFor(%i, %i) = %i', (_name, tokens, bt, expected) => {
    expect(blocksFor(tokens, bt)).toBe(expected);
  });

  it.each([[-1], [1.5], [NaN]])('rejects token count %p', (n) => {
    expect(() => blocksFor(n)).toThrow(RangeError);
  });

  it.each([[0], [-16]])('rejects block size %p', (bt) => {
    expect(() => blocksFor(1, bt)).toThrow(RangeError);
  });
});

describe(chunksFor.name, () => {
  it.each([
    ['zero', 0, 0, 0],
    ['partial only', 255, 1, 0],
    ['exact', 256, 1, 1],
    ['one plus a partial', 257, 2, 1],
    ['two exact', 512, 2, 2],
  ])('%s: %i tokens → %i touched, %i complete', (_name, tokens, touched, complete) => {
    expect(chunksFor(tokens)).toBe(touched);
    expect(completeChunks(tokens)).toBe(complete);
  });
});

describe('ranges', () => {
  it.each([
    ['first block', () => blockTokenRange(0), { start: 0, end: 16 }],
    ['third block', () => blockTokenRange(2), { start: 32, end: 48 }],
    ['first chunk', () => chunkTokenRange(0), { start: 0, end: 256 }],
    ['second chunk', () => chunkTokenRange(1), { start: 256, end: 512 }],
    ['blocks of chunk 0', () => chunkBlockRange(0), { start: 0, end: 16 }],
    ['blocks of chunk 2', () => chunkBlockRange(2), { start: 32, end: 48 }],
    ['blocks of chunk 1, small sizes', () => chunkBlockRange(1, 8, 4), { start: 2, end: 4 }],
  ])('%s', (_name, f, expected) => {
    expect(f()).toEqual(expected);
  });

  it('rejects a chunk size that is not a whole number of blocks', () => {
    expect(() => chunkBlockRange(0, 10, 4)).toThrow(RangeError);
  });
});

describe(blockPosition.name, () => {
  it.each([
    [0, 0, 0],
    [15, 0, 15],
    [16, 1, 0],
    [255, 15, 15],
    [256, 16, 0],
  ])('token %i → block %i offset %i', (pos, block, offset) => {
    expect(blockPosition(pos)).toEqual({ block, offset });
  });
});

describe(slotOf.name, () => {
  const table = [7, 2, 9];
  it.each([
    ['first token of first block', 0, 7 * 16],
    ['last token of first block', 15, 7 * 16 + 15],
    ['first token of second block', 16, 2 * 16],
    ['middle of third block', 40, 9 * 16 + 8],
  ])('%s', (_name, pos, slot) => {
    expect(slotOf(table, pos)).toBe(slot);
  });

  it('throws past the end of the block table', () => {
    expect(() => slotOf(table, 48)).toThrow(RangeError);
  });
});

describe(slotMapping.name, () => {
  it.each([
    ['within one block', [3, 5], 0, 2, 4, [12, 13]],
    ['across a block boundary', [3, 5], 2, 4, 4, [14, 15, 20, 21]],
    ['empty range', [3], 1, 0, 4, []],
  ])('%s', (_name, table, start, count, bt, expected) => {
    expect(Array.from(slotMapping(table, start, count, bt))).toEqual(expected);
  });
});
