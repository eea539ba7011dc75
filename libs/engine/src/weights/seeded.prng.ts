/**
 * xoshiro128** seeded through splitmix32: small, fast, and the same sequence on every
 * machine and run (only 32-bit integer ops via Math.imul). Not for cryptography.
 */
export class SeededPrng {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;
  private spareNormal: number | null = null;

  constructor(seed: number) {
    let x = seed >>> 0;
    const next = (): number => {
      x = (x + 0x9e3779b9) >>> 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.s0 = next() | 0;
    this.s1 = next() | 0;
    this.s2 = next() | 0;
    this.s3 = next() | 0;
  }

  /** Uniform 32-bit unsigned integer. */
  nextU32(): number {
    // State stays int32 (`^`, `|`, `<<` results) so V8 keeps it in small-integer fields;
    // only the output is widened to uint32. The bits are xoshiro128**'s either way.
    const s1 = this.s1;
    const result = Math.imul(rotl(Math.imul(s1, 5), 7), 9) >>> 0;
    const t = s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= s1;
    this.s1 = s1 ^ this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    return result;
  }

  /** Uniform in [0, 1) with 53 random bits. */
  nextFloat(): number {
    const hi = this.nextU32() >>> 5;
    const lo = this.nextU32() >>> 6;
    return (hi * 67108864 + lo) / 9007199254740992;
  }

  /** Standard normal via Box-Muller (pairs cached). */
  nextNormal(): number {
    if (this.spareNormal !== null) {
      const v = this.spareNormal;
      this.spareNormal = null;
      return v;
    }
    const u1 = 1 - this.nextFloat(); // (0, 1]: log never sees 0
    const u2 = this.nextFloat();
    const r = Math.sqrt(-2 * Math.log(u1));
    this.spareNormal = r * Math.sin(2 * Math.PI * u2);
    return r * Math.cos(2 * Math.PI * u2);
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}

/** FNV-1a over the UTF-8 of `name`, mixed with `seed`: one independent stream per tensor. */
export function streamSeed(seed: number, name: string): number {
  let h = (0x811c9dc5 ^ (seed >>> 0)) >>> 0;
  const bytes = new TextEncoder().encode(name);
  for (const b of bytes) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  h = Math.imul(h ^ (seed >>> 16), 0x01000193) >>> 0;
  return h;
}
