import { crc32c } from './crc32c.js';
import { openHostPool } from './host-pool.device.js';
import { ioInfo } from './io.probes.js';
import { ValidationCode } from './native.error.js';
import { crc32cRanges, packCrcRanges, packTransferRanges, transfer } from './pool.transfer.js';
import { pattern, thrown } from './testing/pool.fixtures.js';

describe(crc32c.name, () => {
  const sut = crc32c;

  it('gives the Castagnoli known answers', () => {
    expect(sut(new TextEncoder().encode('123456789'))).toBe(0xe3069283);
    expect(sut(new Uint8Array(32))).toBe(0x8a9136aa);
    expect(sut(new Uint8Array(32).fill(0xff))).toBe(0x62a8ab43);
    expect(sut(new ArrayBuffer(0))).toBe(0);
  });

  it('uses the CPU instruction where there is one', () => {
    expect(['sse4.2', 'armv8-crc', 'software']).toContain(ioInfo().crc32c);
    if (process.arch === 'x64') expect(ioInfo().crc32c).toBe('sse4.2');
  });

  it('extends a CRC over consecutive pieces and honours view offsets', () => {
    const data = pattern(100_003, 1);
    const whole = sut(data);
    expect(sut(data.subarray(70_001), sut(data.subarray(0, 70_001)))).toBe(whole);
    expect(sut(new DataView(data.buffer, 5, 1000))).toBe(sut(data.slice(5, 1005)));
  });

  it('changes when any one byte flips', () => {
    const data = pattern(4096, 2);
    const before = sut(data);
    for (const at of [0, 1234, 4095]) {
      data[at] ^= 1;
      expect(sut(data)).not.toBe(before);
      data[at] ^= 1;
    }
  });

  it('agrees with many-range batches over host pools', async () => {
    const pool = await openHostPool({ bytes: 1 << 20 });
    const data = pattern(300_001, 3);
    await transfer([data, pool], packTransferRanges([{ src: 0, srcOffset: 0, dst: 1, dstOffset: 4096, length: data.length }]));
    const crcs = await crc32cRanges([pool, data], packCrcRanges([
      { operand: 0, offset: 4096, length: data.length },
      { operand: 1, offset: 17, length: 99_999 },
    ]));
    expect([...crcs]).toEqual([sut(data), sut(data.subarray(17, 100_016))]);
    await pool.close();
  });

  it.each([
    ['data is a string', () => sut('abc' as never), TypeError, ValidationCode.InvalidArgType],
    ['seed is negative', () => sut(new Uint8Array(1), -1), RangeError, ValidationCode.OutOfRange],
    ['seed exceeds 32 bits', () => sut(new Uint8Array(1), 2 ** 32), RangeError, ValidationCode.OutOfRange],
  ])('throws when %s', (_name, call, type, code) => {
    const err = thrown(call);
    expect(err).toBeInstanceOf(type);
    expect(err.code).toBe(code);
  });
});
