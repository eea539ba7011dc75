import { alignUp, chunkBytes, segmentBytes, segmentStride, segmentsFitting, type KvGeometry } from './segment.sizing.js';

const llama8b: KvGeometry = { layers: 32, kvHeads: 8, headDim: 128, bytesPerElement: 2 };
const tiny: KvGeometry = { layers: 4, kvHeads: 2, headDim: 16, bytesPerElement: 4 };

describe(segmentBytes.name, () => {
  const cases: Array<[string, KvGeometry, number | undefined, number]> = [
    ['Llama-3.1-8B fp16: 2·256·8·128·2 = 1 MiB', llama8b, undefined, 1 << 20],
    ['mnemo-tiny fp32: 2·256·2·16·4 = 64 KiB', tiny, undefined, 64 << 10],
    ['a 16-token chunk (block-sized)', tiny, 16, 4096],
    ['fp8, one head of 64', { layers: 1, kvHeads: 1, headDim: 64, bytesPerElement: 1 }, undefined, 32768],
  ];
  it.each(cases)('%s', (_name, g, tokens, expected) => {
    expect(segmentBytes(g, tokens)).toBe(expected);
  });

  it.each([
    ['zero heads', { ...tiny, kvHeads: 0 }],
    ['fractional head dim', { ...tiny, headDim: 1.5 }],
    ['NaN element size', { ...tiny, bytesPerElement: NaN }],
  ])('rejects %s', (_name, g) => {
    expect(() => segmentBytes(g)).toThrow(RangeError);
  });
});

describe(chunkBytes.name, () => {
  it.each([
    ['Llama-3.1-8B: 32 MiB per chunk', llama8b, 32 << 20],
    ['mnemo-tiny: 256 KiB per chunk', tiny, 256 << 10],
  ])('%s', (_name, g, expected) => {
    expect(chunkBytes(g)).toBe(expected);
  });

  it('rejects zero layers', () => {
    expect(() => chunkBytes({ ...tiny, layers: 0 })).toThrow(RangeError);
  });
});

describe(alignUp.name, () => {
  it.each([
    ['already aligned', 8192, 4096, 8192],
    ['one byte over', 4097, 4096, 8192],
    ['zero', 0, 4096, 0],
    ['cache-line alignment', 100, 64, 128],
    ['alignment 1 is identity', 12345, 1, 12345],
  ])('%s', (_name, bytes, alignment, expected) => {
    expect(alignUp(bytes, alignment)).toBe(expected);
  });

  it.each([
    ['negative bytes', -1, 4096],
    ['zero alignment', 10, 0],
    ['past 2^53', 2 ** 53, 4096],
  ])('rejects %s', (_name, bytes, alignment) => {
    expect(() => alignUp(bytes, alignment)).toThrow(RangeError);
  });
});

describe(segmentStride.name, () => {
  it.each([
    ['a sector multiple keeps its size', 1 << 20, 4096, 1 << 20],
    ['a 2 KiB segment takes a whole 4 KiB sector', 2048, 4096, 4096],
    ['an odd size rounds up', 5000, 512, 5120],
  ])('%s', (_name, bytes, alignment, expected) => {
    expect(segmentStride(bytes, alignment)).toBe(expected);
  });

  it('rejects an empty segment', () => {
    expect(() => segmentStride(0, 4096)).toThrow(RangeError);
  });
});

describe(segmentsFitting.name, () => {
  it.each([
    ['exact fit', 4 << 20, 1 << 20, 4],
    ['a partial segment does not count', (4 << 20) + 4095, 1 << 20, 4],
    ['empty tier', 0, 4096, 0],
    ['smaller than one segment', 4095, 4096, 0],
  ])('%s', (_name, capacity, stride, expected) => {
    expect(segmentsFitting(capacity, stride)).toBe(expected);
  });

  it('rejects a zero stride', () => {
    expect(() => segmentsFitting(100, 0)).toThrow(RangeError);
  });
});
