import { writeFileSync } from 'node:fs';

import { dropPageCache, ioInfo, probeDirectIo, probeMemcpy } from './io.probes.js';
import { NativeError, NativeErrorCode, ValidationCode } from './native.error.js';
import { rejection, tempDirPerTest } from './testing/pool.fixtures.js';

describe('io probes', () => {
  const dir = tempDirPerTest();

  it('measures memcpy bandwidth per iteration', async () => {
    const r = await probeMemcpy(4 << 20, 3);
    expect(r.memcpySeconds).toHaveLength(3);
    expect(r.kernelSeconds).toHaveLength(3);
    expect(r.threads).toBeGreaterThanOrEqual(1);
    expect(r.medianBytesPerSecond).toBeGreaterThan(100e6);
  });

  it('copies in pieces into a ring of destination buffers, as a restore does', async () => {
    const r = await probeMemcpy(8 << 20, 2, { pieceBytes: 2 << 20, dstRingPieces: 3 });
    expect(r.bytes).toBe(8 << 20);
    expect(r.memcpySeconds).toHaveLength(2);
    expect(r.medianBytesPerSecond).toBeGreaterThan(100e6);
  });

  it('measures O_DIRECT writes then reads through the pool device path', async () => {
    const path = dir.file('probe.bin');
    for (const backend of ['auto', 'pread'] as const) {
      const w = await probeDirectIo({ path, bytes: 4 << 20, blockBytes: 256 * 1024, queueDepth: 8, mode: 'write', backend });
      const r = await probeDirectIo({ path, bytes: 4 << 20, blockBytes: 256 * 1024, queueDepth: 8, mode: 'read', backend });
      for (const x of [w, r]) {
        expect(x.bytesPerSecond).toBeGreaterThan(0);
        expect(x.backend).toBe(backend === 'pread' || !ioInfo().uringAvailable ? 'pread' : 'io_uring');
      }
    }
    const err = await rejection(probeDirectIo({ path, bytes: 8 << 20, mode: 'read' }));
    expect(err).toBeInstanceOf(NativeError);
    expect(err.code).toBe(NativeErrorCode.OutOfRange);
  });

  it('drops a file from the page cache, and says when it is missing', async () => {
    const path = dir.file('chunk.bin');
    writeFileSync(path, Buffer.alloc(65536, 7));
    await expect(dropPageCache(path)).resolves.toBeUndefined();
    expect((await rejection(dropPageCache(dir.file('nope')))).code).toBe(NativeErrorCode.NotFound);
  });

  it('says whether io_uring is compiled in and usable', () => {
    const io = ioInfo();
    expect(io.uringReason === null).toBe(io.uringAvailable);
    if (!io.uringCompiled) expect(io.uringAvailable).toBe(false);
  });

  it.each([
    ['bytes is 0', () => probeMemcpy(0), RangeError, ValidationCode.OutOfRange],
    ['pieces do not divide bytes', () => probeMemcpy(8 << 20, 1, { pieceBytes: 3 << 20 }), RangeError, ValidationCode.InvalidArgValue],
    [
      'the ring outgrows the copy',
      () => probeMemcpy(8 << 20, 1, { pieceBytes: 4 << 20, dstRingPieces: 3 }),
      RangeError,
      ValidationCode.InvalidArgValue,
    ],
    ['mode is unknown', () => probeDirectIo({ path: 'x', bytes: 4096, mode: 'both' as never }), RangeError, ValidationCode.InvalidArgValue],
    [
      'bytes is not whole blocks',
      () => probeDirectIo({ path: 'x', bytes: 5000, blockBytes: 4096, mode: 'read' }),
      RangeError,
      ValidationCode.InvalidArgValue,
    ],
    ['path is empty', () => dropPageCache(''), TypeError, ValidationCode.InvalidArgType],
  ])('rejects when %s', async (_name, call, type, code) => {
    const err = await rejection(call());
    expect(err).toBeInstanceOf(type);
    expect(err.code).toBe(code);
  });
});
