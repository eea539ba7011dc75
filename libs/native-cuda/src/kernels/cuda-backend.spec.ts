import { cudaInfo } from '../native.info.js';
import type { KvGeometry } from './backend.interface.js';
import { CpuKernelBackend } from './cpu-backend.js';
import { CudaKernelBackend, type DeviceDtype, DeviceTensor } from './cuda-backend.js';
import { ATTENTION_CASES, PagedCase, Rng } from './testing/kernel.fixtures.js';

/**
 * Every CUDA kernel against the CPU backend. The CPU side runs on the device-rounded inputs
 * (download(upload(x))), so the remaining difference is fp16/bf16 rounding of outputs and
 * intermediates plus fp32 summation order: per-kernel tolerances below are relative.
 */
const info = cudaInfo();
const skipReason = !info.compiled ? 'the addon was built without CUDA' : info.deviceCount === 0 ? `no CUDA device: ${info.error}` : null;
const describeGpu = skipReason === null ? describe : describe.skip;
if (skipReason !== null) console.info(`CUDA kernel comparison skipped: ${skipReason}`);

/** |a - b| <= atol + rtol |b| element-wise; returns the worst offending index or -1. */
function worst(a: Float32Array, b: Float32Array, rtol: number, atol: number): number {
  if (a.length !== b.length) return 0;
  for (let i = 0; i < a.length; i++) if (!(Math.abs(a[i]! - b[i]!) <= atol + rtol * Math.abs(b[i]!))) return i;
  return -1;
}

// Relative tolerance per storage type (a few output ulps): fp16 has 11 significant bits, bf16 8.
const RTOL: Record<DeviceDtype, number> = { f16: 4e-3, bf16: 3e-2 };

describe(`${CudaKernelBackend.name} construction`, () => {
  (skipReason === null ? it.skip : it)(`refuses to start without a device and says why (${skipReason ?? 'device present'})`, () => {
    expect(() => new CudaKernelBackend()).toThrow(/cuda kernel backend unavailable: .+/);
  });
});

describeGpu.each(['f16', 'bf16'] as const)(
  `${CudaKernelBackend.name} vs ${CpuKernelBackend.name} (%s)${skipReason ? ` — skipped: ${skipReason}` : ''}`,
  (dtype) => {
    const cpu = new CpuKernelBackend();
    let sut: CudaKernelBackend;
    const live: DeviceTensor[] = [];
    const rtol = RTOL[dtype];

    beforeAll(() => {
      sut = new CudaKernelBackend({ dtype });
    });
    afterAll(() => live.forEach((t) => sut.free(t)));

    const dev = (x: Float32Array): DeviceTensor => {
      const t = sut.alloc(x.length);
      live.push(t);
      sut.upload(t, x);
      return t;
    };
    const empty = (n: number): DeviceTensor => {
      const t = sut.alloc(n);
      live.push(t);
      return t;
    };
    /** x as the device stores it: what the CPU reference must start from. */
    const rounded = (x: Float32Array): Float32Array => sut.download(dev(x), x.length);
    const expectClose = (got: Float32Array, want: Float32Array, tol = rtol, atol = tol) => expect(worst(got, want, tol, atol)).toBe(-1);

    it('round-trips uploads to within the storage precision and refuses freed tensors', () => {
      const x = new Rng(1).floats(1000, -100, 100);
      expectClose(rounded(x), x, rtol / 4, 0);
      const t = sut.alloc(4);
      sut.free(t);
      expect(t.freed).toBe(true);
      expect(() => sut.download(t, 4)).toThrow(TypeError);
    });

    it('embedding copies rows exactly', () => {
      const table = rounded(new Rng(2).floats(50 * 64));
      const ids = Int32Array.of(3, 49, 0, 3);
      const out = empty(4 * 64);
      sut.embedding(out, dev(table), ids, 64);
      const want = new Float32Array(4 * 64);
      cpu.embedding(want, table, ids, 64);
      expect(sut.download(out, want.length)).toEqual(want);
    });

    it.each([
      [1, 96, 64],
      [5, 130, 200],
      [40, 70, 129],
      [130, 64, 256],
    ])('matmul m=%i n=%i k=%i', (m, n, k) => {
      const rng = new Rng(m + n + k);
      const x = rounded(rng.floats(m * k)),
        w = rounded(rng.floats(n * k));
      const out = empty(m * n);
      sut.matmul(out, dev(x), dev(w), m, n, k);
      const want = new Float32Array(m * n);
      cpu.matmul(want, x, w, m, n, k);
      expectClose(sut.download(out, m * n), want, rtol, rtol * Math.sqrt(k));
    });

    it('rmsnorm, siluMul, add, addBias, softmax and argmax', () => {
      const rng = new Rng(3);
      const rows = 4,
        dim = 640;
      const x = rounded(rng.floats(rows * dim, -3, 3)),
        y = rounded(rng.floats(rows * dim)),
        w = rounded(rng.floats(dim, 0.5, 1.5));
      const run = (op: (o: DeviceTensor) => void, ref: (o: Float32Array) => void) => {
        const o = empty(rows * dim);
        op(o);
        const want = new Float32Array(rows * dim);
        ref(want);
        return [sut.download(o, rows * dim), want] as const;
      };
      const [dx, dy, dw] = [dev(x), dev(y), dev(w)];
      expectClose(
        ...run(
          (o) => sut.rmsnorm(o, dx, dw, rows, dim, 1e-6),
          (o) => cpu.rmsnorm(o, x, w, rows, dim, 1e-6),
        ),
      );
      expectClose(
        ...run(
          (o) => sut.siluMul(o, dx, dy, rows * dim),
          (o) => cpu.siluMul(o, x, y, rows * dim),
        ),
      );
      expectClose(
        ...run(
          (o) => sut.add(o, dx, dy, rows * dim),
          (o) => cpu.add(o, x, y, rows * dim),
        ),
      );
      expectClose(
        ...run(
          (o) => sut.addBias(o, dx, dw, rows, dim),
          (o) => cpu.addBias(o, x, w, rows, dim),
        ),
      );
      expectClose(
        ...run(
          (o) => sut.softmax(o, dx, rows, dim, 2),
          (o) => cpu.softmax(o, x, rows, dim, 2),
        ),
        rtol,
        1e-4,
      );
      expect(sut.argmax(dx, rows, dim)).toEqual(cpu.argmax(x, rows, dim));
    });

    it.each([32, 64, 128])('rope headDim=%i', (hd) => {
      const rng = new Rng(hd);
      const rows = 5,
        heads = 4;
      const x = rounded(rng.floats(rows * heads * hd));
      const positions = Int32Array.from({ length: rows }, () => rng.int(0, 4096));
      const t = dev(x);
      sut.rope(t, positions, rows, heads, hd, 500000);
      const want = x.slice();
      cpu.rope(want, positions, rows, heads, hd, 500000);
      expectClose(sut.download(t, x.length), want);
    });

    it('writeKv and copyBlocks move exactly the values the CPU moves', () => {
      const rng = new Rng(4);
      const geom: KvGeometry = { numLayers: 2, numKvHeads: 2, headDim: 64, blockSize: 16 };
      const blockElems = 2 * 2 * 16 * 2 * 64;
      const cache = rounded(rng.floats(6 * blockElems));
      const slots = Int32Array.of(0, 17, -1, 95);
      const k = rounded(rng.floats(4 * 128)),
        v = rounded(rng.floats(4 * 128));
      const dc = dev(cache);
      sut.writeKv(dc, dev(k), dev(v), slots, 1, geom);
      sut.copyBlocks(dc, Int32Array.of(5, 1), Int32Array.of(2, 3), geom); // independent: one launch
      sut.copyBlocks(dc, Int32Array.of(0, 2), Int32Array.of(2, 4), geom); // chained: in order
      const want = cache.slice();
      cpu.writeKv(want, k, v, slots, 1, geom);
      cpu.copyBlocks(want, Int32Array.of(5, 1), Int32Array.of(2, 3), geom);
      cpu.copyBlocks(want, Int32Array.of(0, 2), Int32Array.of(2, 4), geom);
      expect(sut.download(dc, want.length)).toEqual(want);
    });

    it.each(ATTENTION_CASES)('pagedAttention $headDim/$blockSize heads $heads kv $kvHeads', (c) => {
      const rng = new Rng(c.headDim + c.blockSize + c.heads);
      const geom: KvGeometry = { numLayers: 2, numKvHeads: c.kvHeads, headDim: c.headDim, blockSize: c.blockSize };
      const seqs: Array<[number, number]> = [
        [1, 1],
        [300, 300],
        [50, 1],
        [20, 5],
        [200, 1],
      ];
      const paged = new PagedCase(geom, 1, seqs, rng);
      const batch = paged.batch(seqs.map((_, i) => i));
      const rows = batch.queryStart[batch.numSeqs]!,
        elems = rows * c.heads * c.headDim;
      const cache = rounded(paged.cache),
        q = rounded(rng.floats(elems, -2, 2));
      const scale = 1 / Math.sqrt(c.headDim);
      const out = empty(elems);
      sut.pagedAttention(out, dev(q), dev(cache), 1, c.heads, geom, batch, scale);
      const want = new Float32Array(elems);
      cpu.pagedAttention(want, q, cache, 1, c.heads, geom, batch, scale);
      expectClose(sut.download(out, elems), want, rtol, rtol);
    });
  },
);
