/**
 * Seeded uniform [0, 1) numbers (mulberry32: the generator the benchmarks use, so a workload
 * drawn here and there from one seed is the same). Deterministic; no global state.
 */
export class SeededRng {
  private a: number;

  constructor(seed: number) {
    this.a = seed >>> 0;
  }

  next(): number {
    this.a = (this.a + 0x6d2b79f5) >>> 0;
    let t = this.a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** A log-normal draw with the given median and σ of its logarithm (Box–Muller, two draws). */
  lognormal(median: number, sigma: number): number {
    return median * Math.exp(sigma * Math.sqrt(-2 * Math.log(Math.max(1e-9, this.next()))) * Math.cos(2 * Math.PI * this.next()));
  }

  /** A child generator for one component, so adding draws in one place does not shift another's. */
  fork(salt: number): SeededRng {
    return new SeededRng(Math.imul((this.a ^ salt) >>> 0, 0x9e3779b1) ^ salt);
  }
}
