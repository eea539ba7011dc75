/**
 * A MessagePack writer that makes the bytes msgspec (vLLM's encoder) makes for the same values:
 * the smallest int form (unsigned forms for non-negative ints), float64 for every float (a
 * general-purpose encoder writes 1.0 as the int 1, which a typed msgspec decoder of `ts: float`
 * accepts but which is not the byte-exact layout), str8 for 32–255-byte strings, map keys in the
 * order given. Reading uses @msgpack/msgpack; only writing needs this control.
 */
export type MsgValue = null | boolean | number | bigint | string | Uint8Array | Float64 | readonly MsgValue[] | MsgMap;

/** A float to be written as float64 even when it is integral. */
export class Float64 {
  constructor(readonly value: number) {}
}

/** A map whose keys are written in insertion order. */
export class MsgMap {
  constructor(readonly entries: ReadonlyArray<readonly [string, MsgValue]>) {}
}

export function encodeMsgpack(value: MsgValue): Uint8Array {
  const out: number[] = [];
  write(out, value);
  return Uint8Array.from(out);
}

function write(out: number[], v: MsgValue): void {
  if (v === null) out.push(0xc0);
  else if (typeof v === 'boolean') out.push(v ? 0xc3 : 0xc2);
  else if (typeof v === 'number') {
    if (!Number.isInteger(v)) writeFloat(out, v);
    else writeInt(out, BigInt(v));
  } else if (typeof v === 'bigint') writeInt(out, v);
  else if (typeof v === 'string') writeStr(out, v);
  else if (v instanceof Uint8Array) writeBin(out, v);
  else if (v instanceof Float64) writeFloat(out, v.value);
  else if (v instanceof MsgMap) {
    header(out, v.entries.length, 0x80, 0xde, 0xdf);
    for (const [k, x] of v.entries) {
      writeStr(out, k);
      write(out, x);
    }
  } else {
    header(out, v.length, 0x90, 0xdc, 0xdd);
    for (const x of v) write(out, x);
  }
}

/** A type byte then `v` in `bytes` big-endian bytes. */
function tagged(out: number[], tag: number, v: bigint, bytes: number): void {
  out.push(tag);
  be(out, v, bytes);
}

function be(out: number[], v: bigint, bytes: number): void {
  for (let i = bytes - 1; i >= 0; i--) out.push(Number((v >> BigInt(8 * i)) & 0xffn));
}

function writeInt(out: number[], v: bigint): void {
  if (v >= 0n) {
    if (v < 0x80n) out.push(Number(v));
    else if (v < 0x100n) tagged(out, 0xcc, v, 1);
    else if (v < 0x10000n) tagged(out, 0xcd, v, 2);
    else if (v < 0x100000000n) tagged(out, 0xce, v, 4);
    else if (v < 1n << 64n) tagged(out, 0xcf, v, 8);
    else throw new RangeError(`integer ${v} does not fit MessagePack`);
  } else {
    const u = (bits: number) => (v + (1n << BigInt(bits))) & ((1n << BigInt(bits)) - 1n);
    if (v >= -32n) out.push(Number(u(8)));
    else if (v >= -128n) tagged(out, 0xd0, u(8), 1);
    else if (v >= -32768n) tagged(out, 0xd1, u(16), 2);
    else if (v >= -2147483648n) tagged(out, 0xd2, u(32), 4);
    else if (v >= -(1n << 63n)) tagged(out, 0xd3, u(64), 8);
    else throw new RangeError(`integer ${v} does not fit MessagePack`);
  }
}

function writeFloat(out: number[], v: number): void {
  const b = Buffer.alloc(8);
  b.writeDoubleBE(v);
  out.push(0xcb, ...b);
}

function writeStr(out: number[], s: string): void {
  const b = Buffer.from(s, 'utf8');
  if (b.length < 32) out.push(0xa0 | b.length);
  else if (b.length < 0x100) out.push(0xd9, b.length);
  else if (b.length < 0x10000) tagged(out, 0xda, BigInt(b.length), 2);
  else tagged(out, 0xdb, BigInt(b.length), 4);
  out.push(...b);
}

function writeBin(out: number[], b: Uint8Array): void {
  if (b.length < 0x100) out.push(0xc4, b.length);
  else if (b.length < 0x10000) tagged(out, 0xc5, BigInt(b.length), 2);
  else tagged(out, 0xc6, BigInt(b.length), 4);
  for (const x of b) out.push(x);
}

function header(out: number[], n: number, fix: number, m16: number, m32: number): void {
  if (n < 16) out.push(fix | n);
  else if (n < 0x10000) tagged(out, m16, BigInt(n), 2);
  else tagged(out, m32, BigInt(n), 4);
}
