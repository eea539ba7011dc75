import { existsSync, statSync } from 'node:fs';

import { allocHostBuffer } from './host-buffer.allocator.js';
import { ioInfo } from './io.probes.js';
import { NativeError, NativeErrorCode, ValidationCode } from './native.error.js';
import { packTransferRanges, transfer } from './pool.transfer.js';
import { openSsdPool, SsdPoolDevice } from './ssd-pool.device.js';
import { pattern, rejection, tempDirPerTest } from './testing/pool.fixtures.js';

const MiB = 2 ** 20;

describe(SsdPoolDevice.name, () => {
  const dir = tempDirPerTest();

  it('creates a preallocated file and says which I/O backend it runs on', async () => {
    const path = dir.file('pool.bin');
    const sut = await openSsdPool({ path, bytes: 8 * MiB });
    try {
      expect(statSync(path).size).toBe(8 * MiB);
      expect(statSync(path).blocks * 512).toBeGreaterThanOrEqual(8 * MiB); // not sparse
      expect(sut.created).toBe(true);
      expect(sut.bytes).toBe(8 * MiB);
      expect(sut.blockDevice).toBe(false);
      expect(sut.bytes % sut.blockSize).toBe(0);
      const io = ioInfo();
      // Where io_uring works it is what runs; otherwise the reason is given.
      expect(sut.backend).toBe(io.uringAvailable ? 'io_uring' : 'pread');
      expect(sut.backendReason === null).toBe(io.uringAvailable);
    } finally {
      await sut.close();
    }
  });

  it('reopens an existing file as it is, and can be forced onto pread', async () => {
    const path = dir.file('pool.bin');
    await (await openSsdPool({ path, bytes: 4 * MiB })).close();
    const sut = await openSsdPool({ path, backend: 'pread' });
    expect(sut.created).toBe(false);
    expect(sut.bytes).toBe(4 * MiB);
    expect(sut.backend).toBe('pread');
    expect(sut.backendReason).toMatch(/forced/);
    await sut.close();
  });

  it('merges adjacent segments into few large requests and reports queue depth', async () => {
    const sut = await openSsdPool({ path: dir.file('pool.bin'), bytes: 8 * MiB, queueDepth: 16, maxRequestBytes: MiB, blockSize: 4096 });
    const mem = new Uint8Array(allocHostBuffer(4 * MiB));
    mem.set(pattern(4 * MiB, 9));
    // 1024 segments of 4 KiB, contiguous on the device: 4 requests of 1 MiB.
    const ranges = packTransferRanges(
      Array.from({ length: 1024 }, (_, i) => ({ src: 0, srcOffset: i * 4096, dst: 1, dstOffset: i * 4096, length: 4096 })),
    );
    await transfer([mem, sut], ranges);
    const stats = sut.stats();
    expect(stats.requests).toBe(4);
    expect(stats.bytesWritten).toBe(4 * MiB);
    expect(stats.inFlight).toBe(0);
    expect(stats.peakInFlight).toBeLessThanOrEqual(16);
    await sut.flush();
    await sut.close();
  });

  it('refuses misaligned I/O with code misaligned, moving nothing', async () => {
    const sut = await openSsdPool({ path: dir.file('pool.bin'), bytes: MiB, blockSize: 4096 });
    const mem = pattern(8192, 1);
    for (const [srcOffset, dstOffset, length] of [
      [0, 512, 4096],
      [0, 0, 4000],
    ] as const) {
      const err = await rejection(transfer([mem, sut], packTransferRanges([{ src: 0, srcOffset, dst: 1, dstOffset, length }])));
      expect(err).toBeInstanceOf(NativeError);
      expect(err.code).toBe(NativeErrorCode.Misaligned);
    }
    expect(sut.stats().requests).toBe(0);
    await sut.close();
  });

  it('fails with not_found for a missing file without bytes', async () => {
    const path = dir.file('missing.bin');
    const err = await rejection(openSsdPool({ path }));
    expect(err).toBeInstanceOf(NativeError);
    expect(err.code).toBe(NativeErrorCode.NotFound);
    expect(existsSync(path)).toBe(false);
  });

  it('is closed for flush and transfers after close()', async () => {
    const sut = await openSsdPool({ path: dir.file('pool.bin'), bytes: MiB });
    await sut.close();
    expect((await rejection(sut.flush())).code).toBe(NativeErrorCode.Closed);
    expect(
      (
        await rejection(
          transfer([sut, new Uint8Array(4096)], packTransferRanges([{ src: 0, srcOffset: 0, dst: 1, dstOffset: 0, length: 4096 }])),
        )
      ).code,
    ).toBe(NativeErrorCode.Closed);
  });

  it.each([
    ['path is not a string', { path: 1 }, TypeError, ValidationCode.InvalidArgType],
    ['path is empty', { path: '' }, RangeError, ValidationCode.InvalidArgValue],
    ['bytes is negative', { path: 'x', bytes: -1 }, RangeError, ValidationCode.OutOfRange],
    ['blockSize is not a power of two', { path: 'x', blockSize: 3000 }, RangeError, ValidationCode.InvalidArgValue],
    ['blockSize is below 512', { path: 'x', blockSize: 256 }, RangeError, ValidationCode.OutOfRange],
    ['queueDepth is 0', { path: 'x', queueDepth: 0 }, RangeError, ValidationCode.OutOfRange],
    ['maxRequestBytes is tiny', { path: 'x', maxRequestBytes: 512 }, RangeError, ValidationCode.OutOfRange],
    ['backend is unknown', { path: 'x', backend: 'spdk' }, RangeError, ValidationCode.InvalidArgValue],
  ])('rejects when %s', async (_name, options, type, code) => {
    const err = await rejection(openSsdPool(options as never));
    expect(err).toBeInstanceOf(type);
    expect(err.code).toBe(code);
  });
});
