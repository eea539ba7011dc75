import { CpuKernelBackend } from './cpu-backend.js';
import { Guarded, maxAbsDiff, naiveRmsnorm, naiveRope, Rng } from './testing/kernel.fixtures.js';

const sut = new CpuKernelBackend();

describe(CpuKernelBackend.name, () => {
  describe('rmsnorm', () => {
    it.each([32, 64, 128, 4096])('dim=%i matches the naive norm, also in place', (dim) => {
      const rng = new Rng(dim);
      const rows = 5;
      const x = rng.floats(rows * dim, -3, 3),
        w = rng.floats(dim, 0.5, 1.5);
      const out = new Guarded(rows * dim);
      sut.rmsnorm(out.view, x, w, rows, dim, 1e-6);
      expect(maxAbsDiff(out.view, naiveRmsnorm(x, w, rows, dim, 1e-6))).toBeLessThan(1e-5);
      expect(out.intact()).toBe(true);
      const inPlace = x.slice();
      sut.rmsnorm(inPlace, inPlace, w, rows, dim, 1e-6);
      expect(inPlace).toEqual(out.view);
    });
  });

  describe('rope', () => {
    it.each([32, 64, 128])('headDim=%i matches rotate_half and leaves position 0 unchanged', (hd) => {
      const rng = new Rng(hd + 7);
      const rows = 6,
        heads = 3;
      const x = rng.floats(rows * heads * hd);
      const positions = Int32Array.from({ length: rows }, (_, i) => (i === 0 ? 0 : rng.int(1, 8192)));
      const y = new Guarded(x.length);
      y.view.set(x);
      sut.rope(y.view, positions, rows, heads, hd, 10000);
      expect(maxAbsDiff(y.view, naiveRope(x, positions, rows, heads, hd, 10000))).toBeLessThan(2e-6);
      expect(y.view.subarray(0, heads * hd)).toEqual(x.subarray(0, heads * hd));
      expect(y.intact()).toBe(true);
    });

    it('refuses an odd head dimension', () => {
      expect(() => sut.rope(new Float32Array(6), new Int32Array(1), 1, 2, 3, 10000)).toThrow(RangeError);
    });
  });

  describe('element-wise ops', () => {
    const rng = new Rng(5);
    const n = 20001;
    const a = rng.floats(n, -8, 8),
      b = rng.floats(n);

    it('siluMul, add and addBias match their definitions', () => {
      const silu = new Guarded(n);
      sut.siluMul(silu.view, a, b, n);
      expect(
        maxAbsDiff(
          silu.view,
          Array.from(a, (g, i) => (g / (1 + Math.exp(-g))) * b[i]!),
        ),
      ).toBeLessThan(1e-5);
      const sum = new Guarded(n);
      sut.add(sum.view, a, b, n);
      expect(sum.view).toEqual(Float32Array.from(a, (v, i) => v + b[i]!));
      const bias = rng.floats(7);
      const biased = new Guarded(21);
      sut.addBias(biased.view, a.subarray(0, 21), bias, 3, 7);
      expect(biased.view).toEqual(Float32Array.from(a.subarray(0, 21), (v, i) => v + bias[i % 7]!));
      expect([silu, sum, biased].every((g) => g.intact())).toBe(true);
    });

    it('embedding gathers table rows and refuses unknown ids', () => {
      const table = rng.floats(10 * 6);
      const out = new Guarded(3 * 6);
      sut.embedding(out.view, table, Int32Array.of(9, 0, 9), 6);
      expect(out.view).toEqual(Float32Array.from([...table.subarray(54, 60), ...table.subarray(0, 6), ...table.subarray(54, 60)]));
      expect(out.intact()).toBe(true);
      expect(() => sut.embedding(out.view, table, Int32Array.of(10), 6)).toThrow(RangeError);
    });

    it('argmax takes the lowest index on ties and ignores NaN; softmax rows sum to one', () => {
      expect(sut.argmax(Float32Array.of(1, 3, 3, 2, NaN, -1, -5, -1), 2, 4)).toEqual(Int32Array.of(1, 1));
      const x = rng.floats(3 * 100, -20, 20);
      const p = new Guarded(300);
      sut.softmax(p.view, x, 3, 100, 0.5);
      for (let r = 0; r < 3; r++) {
        const row = x.subarray(r * 100, (r + 1) * 100);
        const mx = Math.max(...row) * 0.5;
        const e = Array.from(row, (v) => Math.exp(v * 0.5 - mx));
        const s = e.reduce((u, v) => u + v, 0);
        expect(
          maxAbsDiff(
            p.view.subarray(r * 100, (r + 1) * 100),
            e.map((v) => v / s),
          ),
        ).toBeLessThan(1e-6);
      }
      expect(p.intact()).toBe(true);
    });
  });
});
