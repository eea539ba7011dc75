// @ts-expect-error: a plain ES module without types (it runs where only Node is, no build step)
import { fitDispatch, pcieNominalGbs, summarize } from '../libs/native-cuda/tests/cuda_check/summarize.mjs';

/** A made-up device run in the harness's line format: the summary must compute from it, not type figures in. */
function run() {
  const check = [
    { kind: 'op', op: 'matmul', sut: 'cuda-bf16', cases: 10, worst: 0.5, rtol: 0.016, pass: true, worst_case: 'x' },
    { kind: 'op', op: 'matmul', sut: 'cuda-f16', cases: 10, worst: 0.7, rtol: 0.002, pass: true, worst_case: 'x' },
    { kind: 'op', op: 'rope', sut: 'cuda-bf16', cases: 4, worst: 0.2, rtol: 0.016, pass: true, worst_case: 'y' },
    { kind: 'op', op: 'rope', sut: 'cuda-f16', cases: 4, worst: 1.5, rtol: 0.002, pass: false, worst_case: 'y' },
  ];
  const perf = [
    { kind: 'device', name: 'GPU X', cc: 90, gemm_path_prefill: 'cublas', gemm_path_decode: 'cublas', cublas: true },
    { kind: 'gemm', path: 'cublas', engine_default: true, shape: 'o', m: 2048, n: 4096, k: 4096, ms: 2, tflops: 10 },
    { kind: 'gemm', path: 'tensor-core', engine_default: false, shape: 'o', m: 2048, n: 4096, k: 4096, ms: 4, tflops: 5 },
    { kind: 'gemm', path: 'cublas', engine_default: true, shape: 'o', m: 1, n: 4096, k: 4096, ms: 0.5, tflops: 1 },
    { kind: 'attention', mode: 'decode', ctx: 1024, seqs: 8, q_rows: 1, ms: 4 },
    { kind: 'copy_plain', dir: 'h2d', bytes: 1e9, gbs: 50 },
    { kind: 'copy_ranges', dir: 'h2d', submit: 'batched', gbs: 45 },
    { kind: 'copy_ranges', dir: 'h2d', submit: 'per-range', gbs: 40 },
    // 10 µs per call and 50 GB/s exactly: t(µs) = 10 + bytes / 5e4
    { kind: 'copy_size', dir: 'h2d', bytes: 5e4, us_per_call: 11 },
    { kind: 'copy_size', dir: 'h2d', bytes: 5e5, us_per_call: 20 },
    { kind: 'copy_size', dir: 'h2d', bytes: 5e6, us_per_call: 110 },
    { kind: 'swap', dir: 'out', scheme: 'per-block-per-layer', gbs: 5 },
    { kind: 'swap', dir: 'out', scheme: 'block-group-20', gbs: 40 },
    { kind: 'swap', dir: 'in', scheme: 'per-block-per-layer', gbs: 10 },
    { kind: 'swap', dir: 'in', scheme: 'block-group-20', gbs: 40 },
  ];
  const torch = [
    { kind: 'torch_gemm', shape: 'o', m: 2048, ms: 1.6 },
    { kind: 'torch_gemm', shape: 'o', m: 1, ms: 0.4 },
    { kind: 'torch_attention', mode: 'decode', ctx: 1024, ms: 1 },
  ];
  return summarize({ check, perf, torch, gpuCsv: 'GPU X, 5, 16, 5, 16, 80000 MiB', date: '2026-11-27' });
}

describe('cuda_check summarize', () => {
  it('counts an op as passed only when every dtype passes', () => {
    const s = run();
    expect(s.ops_total).toBe(2);
    expect(s.ops_passed).toBe(1);
  });

  it('compares the engine-default GEMM path with torch.matmul at compute-bound shapes, small m apart', () => {
    const s = run();
    expect(s.gemm.map((g: { m: number }) => g.m)).toEqual([2048, 1]);
    expect(s.gemm_frac_of_torch).toBeCloseTo(0.8, 3);
    expect(s.gemm_frac_of_torch_small_m).toBeCloseTo(0.8, 3);
    expect(s.gemm_frac_of_torch_by_path['tensor-core']).toBeCloseTo(0.4, 3);
  });

  it('reads the link, the batched copies, the swap groups and the dispatch fit from the lines', () => {
    const s = run();
    expect(s.h2d_frac_of_link).toBeCloseTo(0.9, 3);
    expect(s.link.nominal_gbs).toBeCloseTo(63, 0);
    expect(s.swap_group_vs_block_gbs).toBeCloseTo(Math.sqrt(8 * 4), 3);
    expect(s.dispatch_fit.h2d.us).toBeCloseTo(10, 1);
    expect(s.attention_frac_of_torch).toBeCloseTo(0.25, 3);
  });

  it('derives PCIe payload bandwidth per direction from generation and width', () => {
    expect(pcieNominalGbs(4, 16)).toBeCloseTo(31.5, 1);
    expect(pcieNominalGbs(5, 16)).toBeCloseTo(63.0, 1);
    expect(pcieNominalGbs(9, 16)).toBeNull();
    expect(fitDispatch([{ bytes: 1, us_per_call: 1 }])).toBeNull();
  });
});
