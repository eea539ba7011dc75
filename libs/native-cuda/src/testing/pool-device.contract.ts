import { allocHostBuffer } from '../host-buffer.allocator.js';
import type { HostPoolDevice } from '../host-pool.device.js';
import { NativeError, NativeErrorCode, ValidationCode } from '../native.error.js';
import { packCrcRanges, packTransferRanges, transfer } from '../pool.transfer.js';
import type { SsdPoolDevice } from '../ssd-pool.device.js';
import { pattern, rejection } from './pool.fixtures.js';

/** One tier as the contract suite drives it. */
export interface TierUnderTest {
  device: HostPoolDevice | SsdPoolDevice;
  /** Changes one stored byte behind the device's back (memory scribble, disk corruption). */
  corrupt(offset: number): Promise<void>;
  /** Closes the device and opens the same file again (persistent tiers only). */
  reopen?: () => Promise<TierUnderTest>;
}

/** Alignment every test offset and length keeps, so the same cases run on every tier. */
const UNIT = 4096;

async function put(device: TierUnderTest['device'], offset: number, data: Uint8Array): Promise<number> {
  const r = await transfer(
    [data, device],
    packTransferRanges([{ src: 0, srcOffset: 0, dst: 1, dstOffset: offset, length: data.byteLength }]),
    {
      crcs: packCrcRanges([{ operand: 0, offset: 0, length: data.byteLength }]),
    },
  );
  return r.crcs[0]!;
}

async function get(device: TierUnderTest['device'], offset: number, length: number): Promise<{ data: Uint8Array; crc: number }> {
  const data = new Uint8Array(length);
  const r = await transfer([device, data], packTransferRanges([{ src: 0, srcOffset: offset, dst: 1, dstOffset: 0, length }]), {
    crcs: packCrcRanges([{ operand: 1, offset: 0, length }]),
  });
  return { data, crc: r.crcs[0]! };
}

/**
 * The contract every pool tier passes (host pool, SSD pool on io_uring, SSD pool on pread):
 * bit-exact put/get, CRCs that catch corruption, concurrent use, a full device under
 * pressure, bounds, close with transfers in flight, and (SSD) reopening.
 * `open` makes a fresh tier of at least 8 MiB; the suite closes it.
 */
export function describePoolDeviceContract(name: string, open: () => Promise<TierUnderTest>, kind: { persistent: boolean }): void {
  describe(`pool device contract: ${name}`, () => {
    let tier: TierUnderTest;
    beforeEach(async () => {
      tier = await open();
    });
    afterEach(async () => {
      await tier.device.close();
    });

    it('gets back exactly what was put, from JS memory and aligned host buffers alike', async () => {
      const a = pattern(3 * UNIT, 1);
      const staged = new Uint8Array(allocHostBuffer(5 * UNIT));
      staged.set(pattern(5 * UNIT, 2));
      const crcA = await put(tier.device, 7 * UNIT, a);
      const crcB = await put(tier.device, 100 * UNIT, staged);
      const backA = await get(tier.device, 7 * UNIT, a.byteLength);
      const backB = await get(tier.device, 100 * UNIT, staged.byteLength);
      expect(Buffer.compare(backA.data, a)).toBe(0);
      expect(Buffer.compare(backB.data, staged)).toBe(0);
      expect([backA.crc, backB.crc]).toEqual([crcA, crcB]);
    });

    it('a corrupt byte changes the CRC read back', async () => {
      const data = pattern(4 * UNIT, 3);
      const stored = await put(tier.device, 16 * UNIT, data);
      await tier.corrupt(16 * UNIT + 5000);
      const back = await get(tier.device, 16 * UNIT, data.byteLength);
      expect(back.crc).not.toBe(stored);
      expect(Buffer.compare(back.data, data)).not.toBe(0);
    });

    it('serves many concurrent transfers, each landing where it should', async () => {
      const chunks = Array.from({ length: 32 }, (_, i) => pattern(2 * UNIT, 10 + i));
      await Promise.all(chunks.map((c, i) => put(tier.device, i * 3 * UNIT, c)));
      const back = await Promise.all(chunks.map((c, i) => get(tier.device, i * 3 * UNIT, c.byteLength)));
      back.forEach((b, i) => expect(Buffer.compare(b.data, chunks[i]!)).toBe(0));
    });

    it('fills to the last byte under pressure without deadlock, and refuses past the end', async () => {
      const bytes = tier.device.bytes;
      const pieces = 96; // more than any queue depth: the device must queue, not stall
      const size = Math.floor(bytes / pieces / UNIT) * UNIT;
      const tail = bytes - size * pieces;
      const all = pattern(bytes, 4);
      const ranges = Array.from({ length: pieces }, (_, i) => ({ offset: i * size, length: size }));
      if (tail > 0) ranges.push({ offset: pieces * size, length: tail });
      await Promise.all(ranges.map((r) => put(tier.device, r.offset, all.subarray(r.offset, r.offset + r.length))));
      const back = await Promise.all(ranges.map((r) => get(tier.device, r.offset, r.length)));
      back.forEach((b, i) =>
        expect(Buffer.compare(b.data, all.subarray(ranges[i]!.offset, ranges[i]!.offset + ranges[i]!.length))).toBe(0),
      );
      const err = await rejection(put(tier.device, bytes - UNIT, pattern(2 * UNIT, 5)));
      expect(err).toBeInstanceOf(RangeError);
      expect(err.code).toBe(ValidationCode.OutOfRange);
      expect(Buffer.compare((await get(tier.device, bytes - UNIT, UNIT)).data, all.subarray(bytes - UNIT))).toBe(0);
    });

    it('close() lets transfers in flight finish, then refuses with code closed', async () => {
      const data = pattern(64 * UNIT, 6);
      const inFlight = Array.from({ length: 8 }, (_, i) => put(tier.device, i * 64 * UNIT, data));
      const closed = tier.device.close();
      const results = await Promise.allSettled(inFlight);
      await closed;
      expect(results.map((r) => r.status)).toEqual(Array(8).fill('fulfilled'));
      expect(tier.device.closed).toBe(true);
      const err = await rejection(put(tier.device, 0, data));
      expect(err).toBeInstanceOf(NativeError);
      expect(err.code).toBe(NativeErrorCode.Closed);
    });

    // Host memory does not outlive its process: only persistent tiers make this promise.
    if (kind.persistent) {
      it('keeps its bytes across close and reopen', async () => {
        const data = pattern(8 * UNIT, 7);
        const crc = await put(tier.device, 40 * UNIT, data);
        tier = await tier.reopen!();
        const back = await get(tier.device, 40 * UNIT, data.byteLength);
        expect(Buffer.compare(back.data, data)).toBe(0);
        expect(back.crc).toBe(crc);
      });
    }
  });
}
