/** Castagnoli polynomial, bit-reflected (iSCSI, ext4, NVMe, and the native addon's CRC). */
const POLY = 0x82f63b78;

/**
 * Slicing-by-8 tables: `T[k][b]` is the CRC of byte `b` followed by `k` zero bytes, so eight
 * input bytes fold in with eight lookups instead of eight dependent byte steps (≈ 4–6× the
 * byte-at-a-time loop in V8). 8 KiB of tables, built once at module load.
 */
const TABLES: Uint32Array[] = (() => {
  const t = Array.from({ length: 8 }, () => new Uint32Array(256));
  for (let b = 0; b < 256; b++) {
    let c = b;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1;
    t[0]![b] = c >>> 0;
  }
  for (let b = 0; b < 256; b++) {
    for (let k = 1; k < 8; k++) t[k]![b] = (t[0]![t[k - 1]![b]! & 0xff]! ^ (t[k - 1]![b]! >>> 8)) >>> 0;
  }
  return t;
})();

/**
 * CRC-32C of `bytes` (standard init and final XOR 0xFFFFFFFF), as an unsigned 32-bit number.
 * Pass the previous result as `crc` to continue over a second buffer:
 * `crc32c(b, crc32c(a)) === crc32c(a ‖ b)`. Known answer: `crc32c("123456789") = 0xE3069283`.
 */
export function crc32c(bytes: Uint8Array, crc = 0): number {
  const [t0, t1, t2, t3, t4, t5, t6, t7] = TABLES as [
    Uint32Array,
    Uint32Array,
    Uint32Array,
    Uint32Array,
    Uint32Array,
    Uint32Array,
    Uint32Array,
    Uint32Array,
  ];
  let c = ~crc >>> 0;
  let i = 0;
  const n = bytes.length;
  const end8 = n - (n % 8);
  while (i < end8) {
    const lo = (c ^ (bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24))) >>> 0;
    c =
      t7[lo & 0xff]! ^
      t6[(lo >>> 8) & 0xff]! ^
      t5[(lo >>> 16) & 0xff]! ^
      t4[lo >>> 24]! ^
      t3[bytes[i + 4]!]! ^
      t2[bytes[i + 5]!]! ^
      t1[bytes[i + 6]!]! ^
      t0[bytes[i + 7]!]!;
    i += 8;
  }
  while (i < n) c = t0[(c ^ bytes[i++]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}
