/**
 * GPT-2's reversible byte → printable-unicode map used by byte-level BPE: printable
 * Latin-1 bytes map to themselves, the other 68 bytes to U+0100 onward, so every byte
 * string becomes a string without whitespace or control characters.
 */
function build(): { toChar: string[]; toByte: Map<string, number> } {
  const bs: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) bs.push(b);
  for (let b = 0xa1; b <= 0xac; b++) bs.push(b);
  for (let b = 0xae; b <= 0xff; b++) bs.push(b);
  const cs = [...bs];
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!bs.includes(b)) {
      bs.push(b);
      cs.push(256 + n++);
    }
  }
  const toChar = new Array<string>(256);
  const toByte = new Map<string, number>();
  bs.forEach((b, i) => {
    const ch = String.fromCodePoint(cs[i]);
    toChar[b] = ch;
    toByte.set(ch, b);
  });
  return { toChar, toByte };
}

const MAP = build();

export function bytesToUnicode(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += MAP.toChar[b];
  return s;
}

/** Inverse of bytesToUnicode; characters outside the map are dropped (they cannot come from BPE output). */
export function unicodeToBytes(s: string, out: number[]): void {
  for (const ch of s) {
    const b = MAP.toByte.get(ch);
    if (b !== undefined) out.push(b);
  }
}
