import { CpuKernelBackend } from './cpu-backend.js';
import { kernelCall } from './kernel.contract.js';
import { Guarded, maxAbsDiff, naiveMatmul, Rng } from './testing/kernel.fixtures.js';

const sut = new CpuKernelBackend();

/** Seeded x[m, k] and w[n, k] and their product by matmul: the reference the batching and packing checks compare bits with. */
function seededProduct(seed: number, m: number, n: number, k: number): { x: Float32Array; w: Float32Array; all: Float32Array } {
  const rng = new Rng(seed);
  const x = rng.floats(m * k),
    w = rng.floats(n * k);
  const all = new Float32Array(m * n);
  sut.matmul(all, x, w, m, n, k);
  return { x, w, all };
}

describe(CpuKernelBackend.name, () => {
  describe('matmul', () => {
    it.each([
      [1, 1, 1],
      [3, 5, 7],
      [7, 33, 64],
      [17, 50, 129],
      [2, 300, 31],
    ])('m=%i n=%i k=%i matches the naive product', (m, n, k) => {
      const rng = new Rng(m * 1000 + n);
      const x = rng.floats(m * k),
        w = rng.floats(n * k);
      const out = new Guarded(m * n, NaN);
      sut.matmul(out.view, x, w, m, n, k);
      expect(maxAbsDiff(out.view, naiveMatmul(x, w, m, n, k))).toBeLessThan(1e-5 * Math.sqrt(k) * 4);
      expect(out.intact()).toBe(true);
    });

    it('gives a row the same bits alone, in a batch of 7 and in a batch of 40', () => {
      const m = 40,
        n = 70,
        k = 1000;
      const { x, w, all } = seededProduct(2, m, n, k);
      for (const r of [0, 6, 33, 39]) {
        const alone = new Float32Array(n);
        sut.matmul(alone, x.subarray(r * k, (r + 1) * k), w, 1, n, k);
        expect(alone).toEqual(all.subarray(r * n, (r + 1) * n));
        const start = Math.min(r, m - 7);
        const seven = new Float32Array(7 * n);
        sut.matmul(seven, x.subarray(start * k, (start + 7) * k), w, 7, n, k);
        expect(seven.subarray((r - start) * n, (r - start + 1) * n)).toEqual(all.subarray(r * n, (r + 1) * n));
      }
    });

    it('refuses an output overlapping an input and undersized buffers', () => {
      const buf = new Float32Array(64);
      expect(() => sut.matmul(buf.subarray(0, 4), buf.subarray(2, 10), new Float32Array(8), 2, 2, 4)).toThrow(RangeError);
      expect(() => sut.matmul(new Float32Array(3), new Float32Array(8), new Float32Array(8), 2, 2, 4)).toThrow(
        expect.objectContaining({ code: 'ERR_OUT_OF_RANGE' }),
      );
      expect(() => sut.matmul(new Float32Array(4), new Float32Array(8), new Float32Array(8), 2, 2, 4.5)).toThrow(RangeError);
      expect(() => sut.matmul([] as unknown as Float32Array, new Float32Array(8), new Float32Array(8), 2, 2, 4)).toThrow(TypeError);
    });
  });

  describe('packWeight / matmulPacked', () => {
    it('gives the bits of matmul on the unpacked weight, for every row count up to 64', () => {
      const M = 64,
        n = 45,
        k = 300;
      const { x, w, all } = seededProduct(31, M, n, k);
      const packed = sut.packWeight(w, n, k);
      for (let m = 1; m <= M; m++) {
        const out = new Guarded(m * n, NaN);
        sut.matmulPacked(out.view, x, packed, m, n, k);
        expect(out.view).toEqual(all.subarray(0, m * n));
        expect(out.intact()).toBe(true);
      }
    });

    it('refuses a weight that was not packed for this n and k', () => {
      // n one past a whole panel packs to one more panel on every path (nr is 16 on AVX2, 32 on AVX-512).
      const nr = sut.isa.nr;
      const w = new Float32Array(nr * 8);
      const packed = sut.packWeight(w, nr, 8);
      expect(() => sut.matmulPacked(new Float32Array(nr), new Float32Array(8), w.subarray(0, 100), 1, nr, 8)).toThrow(RangeError);
      expect(() => sut.matmulPacked(new Float32Array((nr + 1) * 2), new Float32Array(16), packed, 2, nr + 1, 8)).toThrow(RangeError);
    });
  });

  describe('submit', () => {
    it('runs a list in order off the JS thread, with the bits of direct calls', async () => {
      const rng = new Rng(41);
      const m = 256,
        n = 512,
        k = 512;
      const x = rng.floats(m * k),
        w = rng.floats(n * k),
        w2 = rng.floats(n * n);
      const h = new Float32Array(m * n),
        y = new Float32Array(m * n);
      const packed = sut.packWeight(w2, n, n);
      const want = new Float32Array(m * n);
      sut.matmul(h, x, w, m, n, k);
      sut.matmulPacked(want, h, packed, m, n, n);
      h.fill(0);
      const calls = Array.from({ length: 6 }, () => [
        kernelCall<'matmul', Float32Array>('matmul', h, x, w, m, n, k),
        kernelCall<'matmulPacked', Float32Array>('matmulPacked', y, h, packed, m, n, n),
      ]).flat();
      // Twelve products of ~0.1 GFLOP each: the loop turns while they run. A setImmediate queued as they
      // start runs first; a submit on the JS thread would resolve before it. (Counting a 0 ms interval's
      // ticks instead failed under CI's load, when the main thread was not scheduled during the products.)
      let turned = false;
      const done = sut.submit(calls).then(() => turned);
      setImmediate(() => (turned = true));
      expect(await done).toBe(true);
      expect(y).toEqual(want);
    });

    it('runs back-to-back products of one input (q, k, v) as one call with the bits of direct calls', async () => {
      const rng = new Rng(43);
      const m = 97,
        k = 300,
        ns = [64, 37, 37];
      const x = rng.floats(m * k);
      const ws = ns.map((n) => sut.packWeight(rng.floats(n * k), n, k));
      const want = ns.map((n, i) => {
        const out = new Float32Array(m * n);
        sut.matmulPacked(out, x, ws[i]!, m, n, k);
        return out;
      });
      const got = ns.map((n) => new Guarded(m * n, NaN));
      await sut.submit(ns.map((n, i) => kernelCall<'matmulPacked', Float32Array>('matmulPacked', got[i]!.view, x, ws[i]!, m, n, k)));
      got.forEach((g, i) => {
        expect(g.view).toEqual(want[i]);
        expect(g.intact()).toBe(true);
      });
    });

    it('keeps list order for products of one input whose outputs overlap: the later one wins', async () => {
      // The second output starts 8 rows into the first: run as one call, the first product's
      // later row blocks would overwrite rows the second had already written.
      const rng = new Rng(44);
      const m = 300,
        n = 64,
        k = 256,
        shift = 8 * n;
      const x = rng.floats(m * k);
      const w1 = sut.packWeight(rng.floats(n * k), n, k),
        w2 = sut.packWeight(rng.floats(n * k), n, k);
      const want = new Float32Array(m * n + shift);
      sut.matmulPacked(want, x, w1, m, n, k);
      sut.matmulPacked(want.subarray(shift), x, w2, m, n, k);
      for (let rep = 0; rep < 3; rep++) {
        const out = new Float32Array(m * n + shift);
        await sut.submit([
          kernelCall<'matmulPacked', Float32Array>('matmulPacked', out, x, w1, m, n, k),
          kernelCall<'matmulPacked', Float32Array>('matmulPacked', out.subarray(shift), x, w2, m, n, k),
        ]);
        expect(out).toEqual(want);
      }
    });

    it('validates every entry before running any', async () => {
      const out = new Float32Array(4).fill(7);
      const calls = [
        kernelCall<'add', Float32Array>('add', out, new Float32Array(4).fill(1), new Float32Array(4).fill(2), 4),
        kernelCall<'add', Float32Array>('add', out, new Float32Array(2), new Float32Array(4), 4),
      ];
      await expect(sut.submit(calls)).rejects.toThrow(RangeError);
      expect(Array.from(out)).toEqual([7, 7, 7, 7]);
      await expect(sut.submit([{ op: 'nope', args: [] } as unknown as (typeof calls)[0]])).rejects.toThrow(TypeError);
    });
  });
});
