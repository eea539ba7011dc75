import type { KvGeometry } from './backend.interface.js';
import { CpuKernelBackend } from './cpu-backend.js';
import { ATTENTION_CASES, Guarded, maxAbsDiff, naiveAttention, PagedCase, Rng } from './testing/kernel.fixtures.js';

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

describe(CpuKernelBackend.name, () => {
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
