import { batchCopy, packRanges, RANGE_FIELDS } from './batch.copy.js';
import { allocHostBuffer } from './host-buffer.allocator.js';
import { NativeError, NativeErrorCode, ValidationCode } from './native.error.js';
import { pattern as patternBytes } from './testing/pool.fixtures.js';

/** The fixtures' deterministic bytes as the ArrayBuffer batchCopy takes. */
const pattern = (bytes: number, seed: number): ArrayBuffer => patternBytes(bytes, seed).buffer as ArrayBuffer;

function shuffled(n: number, seed: number): number[] {
  const a = Array.from({ length: n }, (_, i) => i);
  let x = seed;
  for (let i = n - 1; i > 0; i--) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    const j = x % (i + 1);
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

/**
 * Scatters `blocks` variable-length blocks from `src` to shuffled slots spread over
 * `dsts`, and computes the expected destination bytes with plain JS copies.
 */
function scatter(src: ArrayBuffer, dsts: ArrayBuffer[], blocks: number, block: number, seed: number) {
  const buffers = [src, ...dsts];
  const slotsPerDst = dsts[0]!.byteLength / block;
  const expected = dsts.map((d) => new Uint8Array(d.slice(0)));
  const ranges = new Float64Array(blocks * RANGE_FIELDS);
  const slots = shuffled(slotsPerDst * dsts.length, seed);
  for (let i = 0; i < blocks; i++) {
    const len = 1 + ((i * 7919 + seed) % block);
    const dst = Math.floor(slots[i]! / slotsPerDst);
    const dstOff = (slots[i]! % slotsPerDst) * block;
    ranges.set([0, i * block, 1 + dst, dstOff, len], i * RANGE_FIELDS);
    expected[dst]!.set(new Uint8Array(src, i * block, len), dstOff);
  }
  return { buffers, ranges, expected };
}

async function rejection(p: Promise<unknown>): Promise<Error & { code?: string }> {
  try {
    await p;
  } catch (err) {
    return err as Error & { code?: string };
  }
  throw new Error('expected a rejection');
}

describe(batchCopy.name, () => {
  const sut = batchCopy;

  it('copies thousands of ranges between many buffers in one call', async () => {
    const blocks = 5000;
    const block = 96;
    const src = pattern(blocks * block, 7);
    const dsts = [new ArrayBuffer(3000 * block), allocHostBuffer(3000 * block)];
    const { buffers, ranges, expected } = scatter(src, dsts, blocks, block, 11);

    await sut(buffers, ranges);

    expect(new Uint8Array(dsts[0]!)).toEqual(expected[0]);
    expect(new Uint8Array(dsts[1]!)).toEqual(expected[1]);
  });

  it('copies large ranges that are split across the pool threads', async () => {
    const bytes = 8 << 20;
    const src = pattern(bytes, 3);
    const dst = allocHostBuffer(bytes);

    await sut([src, dst], packRanges([{ srcBuffer: 0, srcOffset: 0, dstBuffer: 1, dstOffset: 0, length: bytes }]));

    expect(Buffer.compare(new Uint8Array(dst), new Uint8Array(src))).toBe(0);
  });

  it('runs many batches concurrently, each landing where it should', async () => {
    const jobs = Array.from({ length: 12 }, (_, j) => {
      const src = pattern(400 * 64, 100 + j);
      const dst = new ArrayBuffer(400 * 64);
      return { dst, ...scatter(src, [dst], 400, 64, 200 + j) };
    });

    await Promise.all(jobs.map((j) => sut(j.buffers, j.ranges)));

    for (const j of jobs) expect(new Uint8Array(j.dst)).toEqual(j.expected[0]);
  });

  it('copies within one buffer when ranges do not overlap', async () => {
    const buf = pattern(1024, 5);
    const before = new Uint8Array(buf.slice(0));

    await sut([buf], packRanges([{ srcBuffer: 0, srcOffset: 0, dstBuffer: 0, dstOffset: 512, length: 512 }]));

    expect(new Uint8Array(buf, 512)).toEqual(before.subarray(0, 512));
  });

  it('resolves an empty batch', async () => {
    await expect(sut([], new Float64Array(0))).resolves.toBeUndefined();
  });

  describe('conflicts', () => {
    const a = () => new ArrayBuffer(1024);
    it.each([
      ['two ranges write the same bytes', [0, 0, 1, 0, 100, 0, 200, 1, 50, 100]],
      ['a range writes what another reads', [0, 0, 1, 0, 100, 1, 500, 0, 50, 10]],
      ['source and destination of one range overlap', [0, 0, 0, 10, 100]],
    ])('refuses a batch where %s, copying nothing', async (_name, flat) => {
      const src = pattern(1024, 9);
      const dst = a();
      const err = await rejection(sut([src, dst], new Float64Array(flat)));
      expect(err).toBeInstanceOf(NativeError);
      expect(err.code).toBe(NativeErrorCode.RangeConflict);
      expect(new Uint8Array(dst).every((b) => b === 0)).toBe(true);
    });

    it('detects writes through the same buffer passed twice', async () => {
      const src = pattern(64, 1);
      const dst = a();
      const err = await rejection(sut([src, dst, dst], new Float64Array([0, 0, 1, 0, 64, 0, 0, 2, 32, 64])));
      expect(err.code).toBe(NativeErrorCode.RangeConflict);
    });

    it('allows overlapping reads', async () => {
      const src = pattern(256, 2);
      const dst = a();
      await sut([src, dst], new Float64Array([0, 0, 1, 0, 200, 0, 100, 1, 300, 150]));
      expect(new Uint8Array(dst, 300, 150)).toEqual(new Uint8Array(src, 100, 150));
    });
  });

  describe('validation', () => {
    const buf = () => new ArrayBuffer(100);
    it.each([
      [
        'buffers is not an array',
        () => sut('x' as unknown as ArrayBuffer[], new Float64Array(0)),
        TypeError,
        ValidationCode.InvalidArgType,
      ],
      [
        'a buffer is a typed array',
        () => sut([new Uint8Array(4) as unknown as ArrayBuffer], new Float64Array(0)),
        TypeError,
        ValidationCode.InvalidArgType,
      ],
      ['ranges is a plain array', () => sut([buf()], [0, 0, 0, 0, 0] as unknown as Float64Array), TypeError, ValidationCode.InvalidArgType],
      ['ranges length not a multiple of 5', () => sut([buf()], new Float64Array(4)), RangeError, ValidationCode.InvalidArgValue],
      ['negative offset', () => sut([buf(), buf()], new Float64Array([0, -1, 1, 0, 1])), RangeError, ValidationCode.OutOfRange],
      ['fractional length', () => sut([buf(), buf()], new Float64Array([0, 0, 1, 0, 1.5])), RangeError, ValidationCode.OutOfRange],
      ['NaN field', () => sut([buf(), buf()], new Float64Array([0, 0, 1, NaN, 1])), RangeError, ValidationCode.OutOfRange],
      [
        'source buffer index out of range',
        () => sut([buf(), buf()], new Float64Array([2, 0, 1, 0, 1])),
        RangeError,
        ValidationCode.OutOfRange,
      ],
      [
        'destination buffer index out of range',
        () => sut([buf(), buf()], new Float64Array([0, 0, 5, 0, 1])),
        RangeError,
        ValidationCode.OutOfRange,
      ],
      ['source past the end', () => sut([buf(), buf()], new Float64Array([0, 60, 1, 0, 41])), RangeError, ValidationCode.OutOfRange],
      ['destination past the end', () => sut([buf(), buf()], new Float64Array([0, 0, 1, 100, 1])), RangeError, ValidationCode.OutOfRange],
    ])('rejects when %s', async (_name, call, type, code) => {
      const err = await rejection(call());
      expect(err).toBeInstanceOf(type);
      expect(err.code).toBe(code);
    });
  });

  it('attaches the caller stack to native rejections', async () => {
    const err = await rejection(sut([new ArrayBuffer(8)], new Float64Array([0, 0, 0, 0, 8])));
    expect(err.code).toBe(NativeErrorCode.RangeConflict);
    expect(err.stack).toContain('batch.copy.spec');
  });
});
