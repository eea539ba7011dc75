/**
 * A seeded draw of an integer in [0, n) for randomized specs (mulberry32): the low bits of a
 * power-of-two LCG cycle too fast for `% n` with small n. Spec support only; not exported.
 */
export function seeded(seed: number): (n: number) => number {
  let s = seed >>> 0;
  return (n) => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) % n;
  };
}
