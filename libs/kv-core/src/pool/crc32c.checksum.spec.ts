import { crc32c } from './crc32c.checksum.js';

const ascii = (s: string): Uint8Array => new TextEncoder().encode(s);

/** Bit-at-a-time reference straight from the definition, to check the sliced tables against. */
function reference(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
  }
  return ~c >>> 0;
}

describe(crc32c.name, () => {
  // Known answers: the check value of CRC-32C and the iSCSI test vectors (RFC 3720 §B.4).
  const known: Array<[string, Uint8Array, number]> = [
    ['"123456789" (the check value)', ascii('123456789'), 0xe3069283],
    ['empty input', new Uint8Array(0), 0],
    ['32 zero bytes', new Uint8Array(32), 0x8a9136aa],
    ['32 0xFF bytes', new Uint8Array(32).fill(0xff), 0x62a8ab43],
    ['32 ascending bytes', Uint8Array.from({ length: 32 }, (_, i) => i), 0x46dd794e],
    ['32 descending bytes', Uint8Array.from({ length: 32 }, (_, i) => 31 - i), 0x113fdb5c],
  ];
  it.each(known)('%s', (_name, bytes, expected) => {
    expect(crc32c(bytes)).toBe(expected);
  });

  it.each([1, 7, 8, 9, 15, 16, 17, 63, 1000])('matches the bit-wise reference for length %i (sliced body + byte tail)', (n) => {
    const bytes = Uint8Array.from({ length: n }, (_, i) => (i * 151 + 7) & 0xff);
    expect(crc32c(bytes)).toBe(reference(bytes));
  });

  it.each([0, 1, 5, 8, 13])('continues across a split at %i', (at) => {
    const bytes = ascii('123456789abcdef');
    expect(crc32c(bytes.subarray(at), crc32c(bytes.subarray(0, at)))).toBe(crc32c(bytes));
  });

  it('reads only its view of a larger buffer', () => {
    const backing = ascii('xx123456789yy');
    expect(crc32c(backing.subarray(2, 11))).toBe(0xe3069283);
  });
});
