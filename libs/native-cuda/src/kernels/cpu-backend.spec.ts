import type { KvGeometry } from './backend.interface.js';
import { CpuKernelBackend } from './cpu-backend.js';
import { kernelCall } from './kernel.contract.js';
import { Guarded, maxAbsDiff, naiveAttention, naiveMatmul, naiveRmsnorm, naiveRope, PagedCase, Rng } from './testing/kernel.fixtures.js';

const sut = new CpuKernelBackend();

// (context length, query rows): one token, prefill, decode, chunked prefill, exact block, decode.
const SEQS: Array<[number, number]> = [
  [1, 1],
  [37, 37],
  [50, 1],
  [20, 5],
  [16, 16],
  [9, 1],
];
const ATTENTION_CASES = [32, 64, 128].flatMap((headDim) =>
  [16, 8].flatMap((blockSize) =>
    [
      [4, 4],
      [8, 2],
      [6, 1],
    ].map(([heads, kvHeads]) => ({ headDim, blockSize, heads: heads!, kvHeads: kvHeads! })),
  ),
);

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
      const rng = new Rng(2);
      const m = 40,
        n = 70,
        k = 1000;
      const x = rng.floats(m * k),
        w = rng.floats(n * k);
      const all = new Float32Array(m * n);
      sut.matmul(all, x, w, m, n, k);
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
      const rng = new Rng(31);
      const M = 64,
        n = 45,
        k = 300;
      const x = rng.floats(M * k),
        w = rng.floats(n * k);
      const packed = sut.packWeight(w, n, k);
      const all = new Float32Array(M * n);
      sut.matmul(all, x, w, M, n, k);
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
      let ticks = 0;
      const timer = setInterval(() => ticks++, 0);
      const calls = Array.from({ length: 6 }, () => [
        kernelCall<'matmul', Float32Array>('matmul', h, x, w, m, n, k),
        kernelCall<'matmulPacked', Float32Array>('matmulPacked', y, h, packed, m, n, n),
      ]).flat();
      await sut.submit(calls);
      clearInterval(timer);
      expect(y).toEqual(want);
      // Twelve products of ~0.1 GFLOP each: the loop turned while they ran.
      expect(ticks).toBeGreaterThan(0);
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

  describe('KV cache', () => {
    it.each([
      [32, 16],
      [64, 8],
      [128, 16],
    ])('writeKv places rows at their slots (headDim=%i blockSize=%i) and skips -1', (hd, bs) => {
      const rng = new Rng(hd + bs);
      const geom: KvGeometry = { numLayers: 3, numKvHeads: 2, headDim: hd, blockSize: bs };
      const paged = new PagedCase(geom, 2, [], rng); // empty case: just a random cache and the layout
      const cache = new Guarded(paged.cache.length);
      cache.view.set(paged.cache);
      const before = cache.view.slice();
      const te = 2 * hd;
      const slots = Int32Array.of(0, bs * 2 + bs - 1, -1, bs + 3);
      const k = rng.floats(slots.length * te),
        v = rng.floats(slots.length * te);
      sut.writeKv(cache.view, k, v, slots, 2, geom);
      const expected = before.slice();
      slots.forEach((slot, r) => {
        if (slot < 0) return;
        expected.set(k.subarray(r * te, (r + 1) * te), paged.at(Math.floor(slot / bs), 0, slot % bs));
        expected.set(v.subarray(r * te, (r + 1) * te), paged.at(Math.floor(slot / bs), 1, slot % bs));
      });
      expect(cache.view).toEqual(expected);
      expect(cache.intact()).toBe(true);
      expect(() => sut.writeKv(cache.view, k, v, Int32Array.of(paged.numBlocks * bs), 0, geom)).toThrow(RangeError);
    });

    it('writeKv reads host views in place: k and v as subarrays of one payload at an offset', () => {
      const rng = new Rng(31);
      const geom: KvGeometry = { numLayers: 2, numKvHeads: 2, headDim: 32, blockSize: 16 };
      const paged = new PagedCase(geom, 2, [], rng);
      const viaViews = paged.cache.slice();
      const viaCopies = paged.cache.slice();
      const te = 2 * 32;
      const slots = Int32Array.of(3, 17, 20);
      // A restore payload [K|V][token][row] after 5 floats of something else: odd byte offsets.
      const payload = rng.floats(5 + 2 * slots.length * te);
      const k = payload.subarray(5, 5 + slots.length * te);
      const v = payload.subarray(5 + slots.length * te);
      expect(sut.hostView(k)).toBe(k);
      expect(sut.hostArray(k)).toBe(k);
      sut.writeKv(viaViews, sut.hostView(k), sut.hostView(v), slots, 1, geom);
      sut.writeKv(viaCopies, k.slice(), v.slice(), slots, 1, geom);
      expect(viaViews).toEqual(viaCopies);
      expect(viaViews).not.toEqual(paged.cache);
      expect(() => sut.hostView(new Float64Array(4) as unknown as Float32Array)).toThrow(TypeError);
    });

    it('copyBlocks copies every layer and applies pairs in order', () => {
      const geom: KvGeometry = { numLayers: 4, numKvHeads: 2, headDim: 32, blockSize: 16 };
      const blockElems = 4 * 2 * 16 * 2 * 32;
      const rng = new Rng(14);
      const cache = new Guarded(8 * blockElems);
      cache.view.set(rng.floats(8 * blockElems));
      const before = cache.view.slice();
      sut.copyBlocks(cache.view, Int32Array.of(3, 5, 0), Int32Array.of(5, 7, 1), geom);
      const block = (a: Float32Array, i: number) => a.subarray(i * blockElems, (i + 1) * blockElems);
      expect(block(cache.view, 5)).toEqual(block(before, 3));
      expect(block(cache.view, 7)).toEqual(block(before, 3)); // 3 → 5 happened before 5 → 7
      expect(block(cache.view, 1)).toEqual(block(before, 0));
      expect(block(cache.view, 2)).toEqual(block(before, 2));
      expect(cache.intact()).toBe(true);
      expect(() => sut.copyBlocks(cache.view, Int32Array.of(8), Int32Array.of(0), geom)).toThrow(RangeError);
    });
  });

  describe('pagedAttention', () => {
    it.each(ATTENTION_CASES)('matches naive attention over scattered blocks: $headDim/$blockSize heads $heads kv $kvHeads', (c) => {
      const rng = new Rng(c.headDim * 31 + c.blockSize * 7 + c.heads);
      const geom: KvGeometry = { numLayers: 3, numKvHeads: c.kvHeads, headDim: c.headDim, blockSize: c.blockSize };
      const paged = new PagedCase(geom, 1, SEQS, rng);
      const batch = paged.batch(SEQS.map((_, i) => i));
      const rowElems = c.heads * c.headDim;
      const rows = batch.queryStart[batch.numSeqs]!;
      const q = rng.floats(rows * rowElems, -2, 2);
      const scale = 1 / Math.sqrt(c.headDim);
      const out = new Guarded(rows * rowElems, NaN);
      sut.pagedAttention(out.view, q, paged.cache, 1, c.heads, geom, batch, scale);
      paged.seqs.forEach((seq, s) => {
        const r0 = batch.queryStart[s]! * rowElems,
          r1 = batch.queryStart[s + 1]! * rowElems;
        expect(maxAbsDiff(out.view.subarray(r0, r1), naiveAttention(q.subarray(r0, r1), seq, geom, c.heads, scale))).toBeLessThan(2e-5);
      });
      expect(out.intact()).toBe(true);
    });

    it('gives a sequence the same bits alone and inside a batch, and a prefill row the bits of a decode step', () => {
      const rng = new Rng(99);
      const geom: KvGeometry = { numLayers: 2, numKvHeads: 2, headDim: 64, blockSize: 16 };
      const heads = 8,
        rowElems = heads * 64;
      const paged = new PagedCase(geom, 0, SEQS, rng);
      const batch = paged.batch(SEQS.map((_, i) => i));
      const rows = batch.queryStart[batch.numSeqs]!;
      const q = rng.floats(rows * rowElems);
      const all = new Float32Array(rows * rowElems);
      sut.pagedAttention(all, q, paged.cache, 0, heads, geom, batch, 0.125);
      paged.seqs.forEach((seq, s) => {
        const r0 = batch.queryStart[s]! * rowElems,
          r1 = batch.queryStart[s + 1]! * rowElems;
        const alone = new Float32Array(r1 - r0);
        sut.pagedAttention(alone, q.subarray(r0, r1), paged.cache, 0, heads, geom, paged.batch([s], 0), 0.125);
        expect(alone).toEqual(all.subarray(r0, r1));
      });
      const prefill = paged.seqs[1]!; // 37 rows
      for (const i of [0, 16, 36]) {
        const row = batch.queryStart[1]! + i;
        const step = new Float32Array(rowElems);
        const decode = {
          numSeqs: 1,
          queryStart: Int32Array.of(0, 1),
          contextLen: Int32Array.of(i + 1),
          blockTables: Int32Array.from(prefill.blocks),
          maxBlocksPerSeq: prefill.blocks.length,
        };
        sut.pagedAttention(step, q.subarray(row * rowElems, (row + 1) * rowElems), paged.cache, 0, heads, geom, decode, 0.125);
        expect(step).toEqual(all.subarray(row * rowElems, (row + 1) * rowElems));
      }
    });

    it('refuses inconsistent batches before touching memory', () => {
      const geom: KvGeometry = { numLayers: 1, numKvHeads: 1, headDim: 32, blockSize: 16 };
      const paged = new PagedCase(geom, 0, [[20, 4]], new Rng(3));
      const good = paged.batch([0]);
      const out = new Float32Array(4 * 32),
        q = new Float32Array(4 * 32);
      const call =
        (b: typeof good, cache = paged.cache) =>
        () =>
          sut.pagedAttention(out, q, cache, 0, 1, geom, b, 1);
      expect(call(good)).not.toThrow();
      expect(call({ ...good, contextLen: Int32Array.of(3) })).toThrow(RangeError);
      expect(call({ ...good, blockTables: Int32Array.of(paged.numBlocks, 0, -1, -1) })).toThrow(RangeError);
      expect(call({ ...good, maxBlocksPerSeq: 1, blockTables: Int32Array.of(0) })).toThrow(RangeError);
      expect(call(good, paged.cache.subarray(1))).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARG_VALUE' }));
      expect(() => sut.pagedAttention(out, q, paged.cache, 0, 3, { ...geom, numKvHeads: 2 }, good, 1)).toThrow(RangeError);
    });
  });
});
