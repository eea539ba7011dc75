import { cudaInfo, externalMemory, nativeStats } from './native.info.js';
import { HostPoolDevice, numaNodes, openHostPool } from './host-pool.device.js';
import { NativeError, NativeErrorCode, ValidationCode } from './native.error.js';
import { rejection } from './testing/pool.fixtures.js';

const MiB = 2 ** 20;

describe(HostPoolDevice.name, () => {
  it('opens a region of the asked size, pinned exactly when a CUDA device is present', async () => {
    const sut = await openHostPool({ bytes: 3 * MiB + 5 });
    try {
      expect(sut.bytes).toBe(3 * MiB + 5);
      expect(sut.kind).toBe(cudaInfo().deviceCount > 0 ? 'pinned' : 'pageable');
      expect(sut.numaNode).toBeNull();
      expect(sut.closed).toBe(false);
    } finally {
      await sut.close();
    }
  });

  it('reports its memory to V8 while open and gives it back on close', async () => {
    const sut = await openHostPool({ bytes: 16 * MiB });
    // Counters are checked in the direction close moves them (a GC may free other memory
    // at any time, never add some).
    const open = { v8: externalMemory(), stats: nativeStats() };
    expect(open.v8).toBeGreaterThanOrEqual(16 * MiB);
    await sut.close();
    const closed = { v8: externalMemory(), stats: nativeStats() };
    expect(open.v8 - closed.v8).toBeGreaterThanOrEqual(16 * MiB);
    expect(open.stats.poolRegions - closed.stats.poolRegions).toBeGreaterThanOrEqual(1);
    expect(open.stats.poolBytes - closed.stats.poolBytes).toBeGreaterThanOrEqual(16 * MiB);
    await sut.close(); // idempotent: nothing is given back twice
    expect(externalMemory()).toBeGreaterThan(closed.v8 - 16 * MiB);
  });

  it('binds its pages to a NUMA node when asked', async () => {
    const node = numaNodes().at(-1)!;
    const sut = await openHostPool({ bytes: 4 * MiB, numaNode: node });
    expect(sut.numaNode).toBe(node);
    await sut.close();
  });

  it('refuses a NUMA node the machine does not have', async () => {
    const err = await rejection(openHostPool({ bytes: MiB, numaNode: 1023 }));
    expect(err).toBeInstanceOf(NativeError);
    expect(err.code).toBe(NativeErrorCode.InvalidArgument);
  });

  it.each([
    ['options missing', () => openHostPool(undefined as never), TypeError, ValidationCode.InvalidArgType],
    ['bytes is a string', () => openHostPool({ bytes: '1' as never }), TypeError, ValidationCode.InvalidArgType],
    ['bytes is 0', () => openHostPool({ bytes: 0 }), RangeError, ValidationCode.OutOfRange],
    ['bytes is fractional', () => openHostPool({ bytes: 1.5 }), RangeError, ValidationCode.OutOfRange],
    ['bytes is beyond 2^46', () => openHostPool({ bytes: 2 ** 47 }), RangeError, ValidationCode.OutOfRange],
    ['numaNode is negative', () => openHostPool({ bytes: MiB, numaNode: -1 }), RangeError, ValidationCode.OutOfRange],
    ['numaNode is a string', () => openHostPool({ bytes: MiB, numaNode: '0' as never }), TypeError, ValidationCode.InvalidArgType],
    ['populate is not a boolean', () => openHostPool({ bytes: MiB, populate: 1 as never }), TypeError, ValidationCode.InvalidArgType],
  ])('rejects when %s', async (_name, call, type, code) => {
    const err = await rejection(call());
    expect(err).toBeInstanceOf(type);
    expect(err.code).toBe(code);
  });
});
