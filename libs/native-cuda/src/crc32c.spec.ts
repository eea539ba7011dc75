import { crc32c, crc32cImplementations, selectCrc32c, type Crc32cImplementation } from './crc32c.js';
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

  it('uses the fastest implementation the CPU has', () => {
    expect(['vpclmulqdq', 'sse4.2', 'armv8-crc', 'software']).toContain(ioInfo().crc32c);
    expect(ioInfo().crc32c).toBe(crc32cImplementations()[0]);
    if (process.arch === 'x64') expect(['vpclmulqdq', 'sse4.2']).toContain(ioInfo().crc32c);
  });

  it('gives the same answers whichever implementation is selected, in transfers too', async () => {
    const data = pattern(600_077, 4);
    const first = crc32cImplementations()[0]!;
    const seen = new Set<number>();
    try {
      for (const name of crc32cImplementations()) {
        selectCrc32c(name);
        expect(ioInfo().crc32c).toBe(name);
        expect(sut(new TextEncoder().encode('123456789'))).toBe(0xe3069283);
        seen.add(sut(data));
        const out = new Uint8Array(data.length);
        const r = await transfer([data, out], packTransferRanges([{ src: 0, srcOffset: 0, dst: 1, dstOffset: 0, length: data.length }]), {
          crcs: packCrcRanges([{ operand: 1, offset: 0, length: data.length }]),
        });
        seen.add(r.crcs[0]!);
        expect(Buffer.compare(out, data)).toBe(0);
      }
    } finally {
      selectCrc32c(first);
    }
    expect(seen.size).toBe(1);
  });

  it('refuses an implementation this CPU cannot run, and keeps the one in use', () => {
    const before = ioInfo().crc32c;
    expect(thrown(() => selectCrc32c('no-such-crc' as Crc32cImplementation))).toMatchObject({ code: 'invalid_argument' });
    expect(thrown(() => selectCrc32c(7 as unknown as Crc32cImplementation))).toBeInstanceOf(TypeError);
    expect(ioInfo().crc32c).toBe(before);
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
    const crcs = await crc32cRanges(
      [pool, data],
      packCrcRanges([
        { operand: 0, offset: 4096, length: data.length },
        { operand: 1, offset: 17, length: 99_999 },
      ]),
    );
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
