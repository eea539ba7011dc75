import { allocHostBuffer, freeHostBuffer, hostMemoryKind } from './host-buffer.allocator.js';
import { NativeError, NativeErrorCode, ValidationCode } from './native.error.js';
import { cudaInfo, externalMemory, nativeStats } from './native.info.js';
import { packTransferRanges, transfer } from './pool.transfer.js';
import { pattern, thrown } from './testing/pool.fixtures.js';

describe(allocHostBuffer.name, () => {
  const sut = allocHostBuffer;

  it.each([1, 100, 4096, 1 << 20])('returns a zero-filled, writable ArrayBuffer of %i bytes', (bytes) => {
    const buf = sut(bytes, { alignment: 64 });
    expect(buf).toBeInstanceOf(ArrayBuffer);
    expect(buf.byteLength).toBe(bytes);
    const view = new Uint8Array(buf);
    expect(view.every((b) => b === 0)).toBe(true);
    view.fill(0xab);
    expect(view[bytes - 1]).toBe(0xab);
  });

  it('counts live native allocations until they are collected', () => {
    const before = nativeStats();
    const bufs = [sut(1000), sut(3000)];
    const after = nativeStats();
    expect(after.hostBuffers - before.hostBuffers).toBeGreaterThanOrEqual(2);
    expect(after.hostBytes - before.hostBytes).toBeGreaterThanOrEqual(4000);
    expect(bufs).toHaveLength(2);
  });

  it('hands out pinned memory exactly when a CUDA device is present', () => {
    expect(hostMemoryKind()).toBe(cudaInfo().deviceCount > 0 ? 'pinned' : 'pageable');
  });

  it.each([
    ['bytes is a string', () => sut('8' as unknown as number), TypeError, ValidationCode.InvalidArgType],
    ['bytes is 0', () => sut(0), RangeError, ValidationCode.OutOfRange],
    ['bytes is fractional', () => sut(1.5), RangeError, ValidationCode.OutOfRange],
    ['bytes is too large', () => sut(2 ** 41), RangeError, ValidationCode.OutOfRange],
    ['alignment is not a power of two', () => sut(64, { alignment: 48 }), RangeError, ValidationCode.InvalidArgValue],
    ['alignment is below 8', () => sut(64, { alignment: 4 }), RangeError, ValidationCode.InvalidArgValue],
    ['alignment is above 2^30', () => sut(64, { alignment: 2 ** 31 }), RangeError, ValidationCode.InvalidArgValue],
  ])('throws when %s', (_name, call, type, code) => {
    let caught: unknown;
    try {
      call();
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(type);
    expect((caught as { code: string }).code).toBe(code);
  });
});

describe(freeHostBuffer.name, () => {
  const sut = freeHostBuffer;

  it('frees at once: V8 and the native counters drop, the buffer is detached', () => {
    const buf = allocHostBuffer(8 << 20);
    const view = new Uint8Array(buf);
    // Garbage from earlier tests may be collected at any time, so counters are only
    // checked in the direction a free moves them.
    const before = { v8: externalMemory(), stats: nativeStats() };
    sut(buf);
    expect(before.v8 - externalMemory()).toBeGreaterThanOrEqual(8 << 20);
    expect(before.stats.hostBuffers - nativeStats().hostBuffers).toBeGreaterThanOrEqual(1);
    expect(before.stats.hostBytes - nativeStats().hostBytes).toBeGreaterThanOrEqual(8 << 20);
    expect(buf.byteLength).toBe(0);
    expect(view.length).toBe(0);
    expect(view[0]).toBeUndefined();
  });

  it('refuses a second free and buffers that are not from allocHostBuffer', () => {
    const buf = allocHostBuffer(4096);
    sut(buf);
    for (const bad of [buf, new ArrayBuffer(64)]) {
      const err = thrown(() => sut(bad));
      expect(err).toBeInstanceOf(NativeError);
      expect(err.code).toBe(NativeErrorCode.InvalidArgument);
    }
    expect(thrown(() => sut(new Uint8Array(4) as never)).code).toBe(ValidationCode.InvalidArgType);
  });

  it('keeps the memory for a transfer already in flight', async () => {
    const src = allocHostBuffer(16 << 20);
    const data = pattern(16 << 20, 8);
    new Uint8Array(src).set(data);
    const dst = new Uint8Array(16 << 20);
    const copying = transfer([src, dst], packTransferRanges([{ src: 0, srcOffset: 0, dst: 1, dstOffset: 0, length: 16 << 20 }]));
    sut(src);
    await copying;
    expect(Buffer.compare(dst, data)).toBe(0);
    // A transfer naming the freed buffer now moves nothing: it has no bytes left.
    await expect(
      transfer([src, dst], packTransferRanges([{ src: 0, srcOffset: 0, dst: 1, dstOffset: 0, length: 1 }])),
    ).rejects.toBeInstanceOf(RangeError);
  });
});
