import { allocHostBuffer, hostMemoryKind } from './host-buffer.allocator.js';
import { ValidationCode } from './native.error.js';
import { cudaInfo, nativeStats } from './native.info.js';

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
