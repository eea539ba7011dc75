import { closeSync, openSync, readSync, writeFileSync } from 'node:fs';
import type { HostTensor } from './model-weights.js';

/**
 * The safetensors container: u64 little-endian header length, a JSON header
 * `{name: {dtype, shape, data_offsets: [begin, end]}, __metadata__?}`, then the raw
 * little-endian data (offsets relative to the end of the header).
 */
export type SafetensorsDtype = 'F32' | 'F16' | 'BF16';

export interface SafetensorsEntry {
  readonly dtype: string;
  readonly shape: readonly number[];
  readonly dataOffsets: readonly [number, number];
}

const BYTES: Record<SafetensorsDtype, number> = { F32: 4, F16: 2, BF16: 2 };

/** Reads tensors out of one .safetensors file, one positioned read per tensor (no whole-file buffer). */
export class SafetensorsFile {
  readonly entries: ReadonlyMap<string, SafetensorsEntry>;
  private readonly dataStart: number;

  constructor(readonly path: string) {
    const fd = openSync(path, 'r');
    try {
      const lenBuf = Buffer.alloc(8);
      if (readSync(fd, lenBuf, 0, 8, 0) !== 8) throw new Error(`${path}: truncated safetensors header`);
      const headerLen = Number(lenBuf.readBigUInt64LE(0));
      if (headerLen <= 0 || headerLen > 100 * 1024 * 1024) throw new Error(`${path}: implausible header length ${headerLen}`);
      const header = Buffer.alloc(headerLen);
      if (readSync(fd, header, 0, headerLen, 8) !== headerLen) throw new Error(`${path}: truncated header`);
      const json = JSON.parse(header.toString('utf8')) as Record<
        string,
        { dtype: string; shape: number[]; data_offsets: [number, number] }
      >;
      const entries = new Map<string, SafetensorsEntry>();
      for (const [name, e] of Object.entries(json)) {
        if (name === '__metadata__') continue;
        entries.set(name, { dtype: e.dtype, shape: e.shape, dataOffsets: e.data_offsets });
      }
      this.entries = entries;
      this.dataStart = 8 + headerLen;
    } finally {
      closeSync(fd);
    }
  }

  /** Reads one tensor converted to fp32. */
  read(name: string): HostTensor {
    const e = this.entries.get(name);
    if (!e) throw new Error(`${this.path}: no tensor ${name}`);
    const dtype = e.dtype as SafetensorsDtype;
    const width = BYTES[dtype];
    if (width === undefined) throw new Error(`${this.path}: tensor ${name} has unsupported dtype ${e.dtype}`);
    const count = e.shape.reduce((a, b) => a * b, 1);
    const [begin, end] = e.dataOffsets;
    if (end - begin !== count * width) throw new Error(`${this.path}: tensor ${name} byte length ${end - begin} != ${count * width}`);
    const raw = Buffer.alloc(end - begin);
    const fd = openSync(this.path, 'r');
    try {
      if (readSync(fd, raw, 0, raw.length, this.dataStart + begin) !== raw.length)
        throw new Error(`${this.path}: tensor ${name} truncated`);
    } finally {
      closeSync(fd);
    }
    return { shape: e.shape, data: decode(raw, dtype, count) };
  }
}

function decode(raw: Buffer, dtype: SafetensorsDtype, count: number): Float32Array {
  const out = new Float32Array(count);
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  if (dtype === 'F32') {
    for (let i = 0; i < count; i++) out[i] = view.getFloat32(i * 4, true);
  } else if (dtype === 'BF16') {
    const bits = new Uint32Array(out.buffer);
    for (let i = 0; i < count; i++) bits[i] = view.getUint16(i * 2, true) << 16;
  } else {
    for (let i = 0; i < count; i++) out[i] = halfToFloat(view.getUint16(i * 2, true));
  }
  return out;
}

/** IEEE binary16 → number (exact: every half is representable in fp32). */
export function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 0x1f) return frac === 0 ? sign * Infinity : NaN;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

/** number → binary16, round to nearest even (for writing test fixtures and exports). */
export function floatToHalf(x: number): number {
  const f = new Float32Array([x]);
  const b = new Uint32Array(f.buffer)[0];
  const sign = (b >>> 16) & 0x8000;
  const exp = (b >>> 23) & 0xff;
  let mant = b & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let half = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const mid = 1 << (shift - 1);
    if (rem > mid || (rem === mid && half & 1)) half++;
    return sign | half;
  }
  let half = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && half & 1)) half++;
  return sign | half;
}

/** fp32 bits → bfloat16, round to nearest even. */
export function floatToBf16(x: number): number {
  const b = new Uint32Array(new Float32Array([x]).buffer)[0];
  if ((b & 0x7f800000) === 0x7f800000 && b & 0x7fffff) return (b >>> 16) | 0x40;
  return ((b + 0x7fff + ((b >>> 16) & 1)) >>> 16) & 0xffff;
}

/** Writes tensors (from fp32) into a .safetensors file in the given dtype. */
export function writeSafetensors(path: string, tensors: ReadonlyMap<string, HostTensor>, dtype: SafetensorsDtype = 'F32'): void {
  const width = BYTES[dtype];
  const header: Record<string, unknown> = { __metadata__: { format: 'pt' } };
  let offset = 0;
  for (const [name, t] of tensors) {
    const len = t.data.length * width;
    header[name] = { dtype, shape: t.shape, data_offsets: [offset, offset + len] };
    offset += len;
  }
  let headerBuf = Buffer.from(JSON.stringify(header), 'utf8');
  // Pad the header with spaces to 8 bytes so the data is aligned, as the reference writer does.
  const pad = (8 - (headerBuf.length % 8)) % 8;
  headerBuf = Buffer.concat([headerBuf, Buffer.alloc(pad, 0x20)]);
  const data = Buffer.alloc(offset);
  let pos = 0;
  for (const t of tensors.values()) {
    for (let i = 0; i < t.data.length; i++, pos += width) {
      if (dtype === 'F32') data.writeFloatLE(t.data[i], pos);
      else if (dtype === 'F16') data.writeUInt16LE(floatToHalf(t.data[i]), pos);
      else data.writeUInt16LE(floatToBf16(t.data[i]), pos);
    }
  }
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(headerBuf.length));
  writeFileSync(path, Buffer.concat([len, headerBuf, data]));
}
