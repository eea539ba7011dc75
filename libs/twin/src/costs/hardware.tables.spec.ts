import {
  deviceKvBlocks,
  derivedDispatchMs,
  dispatchBandMs,
  GPUS,
  kvBytesPerToken,
  MODELS,
  nvlinkLink,
  pcieLink,
} from './hardware.tables.js';
import { DEFAULT_SIM_COST, simAttentionShare } from '@mnemo/engine';
import { rooflineCompute, scaleGpu } from './roofline.compute.js';
import { transferMs } from './transfer.port.js';

const llama8 = MODELS['llama-3.1-8b'];

describe('hardware tables', () => {
  it.each([
    ['llama-3.1-8b', 131_072],
    ['llama-2-13b', 819_200],
    // SwiftCache Table 2 (fp16): LWM 0.50 MB, Qwen3-8B 0.141 MB, Qwen3-14B 0.156 MB per token.
    ['lwm-7b', 524_288],
    ['qwen3-8b', 147_456],
    ['qwen3-14b', 163_840],
  ] as const)('%s keeps %d KV bytes per token (2 · layers · KV heads · head dim · 2 B)', (name, bytes) => {
    expect(kvBytesPerToken(MODELS[name])).toBe(bytes);
  });

  it('fits device KV after weights and the reserve: an A10 holds a few thousand 8B blocks, an A100 ten times more', () => {
    const a10 = deviceKvBlocks(GPUS.A10, llama8);
    const a100 = deviceKvBlocks(GPUS.A100, llama8);
    expect(a10).toBeGreaterThan(1000);
    expect(a10).toBeLessThan(4000);
    expect(a100 / a10).toBeGreaterThan(8);
    expect(deviceKvBlocks(GPUS.A10, MODELS['llama-2-13b'])).toBe(0);
  });

  it("carries SwiftCache's NVLink at 200 GB/s each way, about 7× one GPU's whole PCIe 4.0 link", () => {
    expect(nvlinkLink().bytesPerMs / pcieLink(4).bytesPerMs).toBeCloseTo((200 * (55.3 / 63)) / 25, 6);
    expect(nvlinkLink().bytesPerMs).toBeCloseTo((200e9 * (55.3 / 63)) / 1000, 0);
  });

  it("derives the per-call dispatch from FastSwitch's Table 1 inside §2.2's 90–95% band", () => {
    const d = derivedDispatchMs();
    const [lo, hi] = dispatchBandMs();
    expect(d).toBeCloseTo(0.117, 3);
    expect(lo).toBeCloseTo(0.09, 6);
    expect(hi).toBeCloseTo(0.19, 6);
    expect(d).toBeGreaterThan(lo);
    expect(d).toBeLessThan(hi);
  });

  it('prices a 128 KB copy over PCIe 4.0 at the derived dispatch as ≥ 90% dispatch, and a 2 MiB group as mostly bytes', () => {
    const link = pcieLink(4, derivedDispatchMs());
    const small = transferMs(link, 1, 128 * 1024);
    expect(link.dispatchMs / small).toBeGreaterThan(0.9);
    const measured = pcieLink(4);
    const group = transferMs(measured, 1, 20 * 128 * 1024);
    expect(measured.dispatchMs / group).toBeLessThan(0.05);
  });
});

describe('rooflineCompute', () => {
  const a100 = rooflineCompute(GPUS.A100, llama8);

  it('decode is memory-bound: one sequence costs the weights streamed once, a larger batch little more', () => {
    const one = a100.decodeMs(1, 1000);
    const weightsMs = (llama8.params * 2) / ((GPUS.A100.memBytesPerS * 0.8) / 1000);
    expect(one).toBeGreaterThan(weightsMs);
    expect(one).toBeLessThan(weightsMs + 2);
    expect(a100.decodeMs(8, 8000) / one).toBeLessThan(1.5);
  });

  it("grows decode with the context read: 32 sequences of 4K tokens take ≥ 1.4× 8 of them (Symphony Fig. 2's trend)", () => {
    expect(a100.decodeMs(32, 32 * 4096) / a100.decodeMs(8, 8 * 4096)).toBeGreaterThan(1.4);
  });

  it('prefill is compute-bound and linear in tokens, plus attention over the attended pairs', () => {
    const t1 = a100.prefillMs(1, 1000, 0);
    const t4 = a100.prefillMs(1, 4000, 0);
    expect((t4 - 1) / (t1 - 1)).toBeCloseTo(4, 5);
    expect(a100.prefillMs(1, 4000, 8e6)).toBeGreaterThan(t4);
    expect(a100.prefillPerTokenMs).toBeCloseTo((2 * llama8.params) / ((312e12 * 0.5) / 1000), 9);
    expect(a100.prefillMs(0, 0, 0)).toBe(0);
  });

  it('states its attention share as its own prices give it: a 256-token chunk over 256 tokens of context ÷ computing that chunk', () => {
    const chunk = a100.prefillMs(1, 256 * 64, 0) - a100.prefillMs(1, 256 * 63, 0);
    const pair = (a100.prefillMs(1, 256 * 64, 256 * 256) - a100.prefillMs(1, 256 * 64, 0)) / 1;
    expect(a100.attentionShare).toBeCloseTo(pair / chunk, 6);
    // Llama-3.1-8B: 4 · 32 layers · 4,096 · 256 attention FLOPs per pair against 2 · 8B per token: about 0.8 %.
    expect(a100.attentionShare).toBeCloseTo((4 * 32 * 4096 * 256) / (2 * llama8.params), 3);
  });

  it.each([
    { name: 'linear prefill: no share', cost: { prefillPerTokenMs: 0.04, prefillPerKContextMs: 0 }, want: 0 },
    // 0.002 ms per token per 1K attended · 256 · 256 / 1000 ÷ (0.04 · 256) = 0.0128
    { name: 'an attention term', cost: { prefillPerTokenMs: 0.04, prefillPerKContextMs: 0.002 }, want: 0.0128 },
    { name: 'free prefill: no share (nothing to divide by)', cost: { prefillPerTokenMs: 0, prefillPerKContextMs: 0.002 }, want: 0 },
  ])('the sim cost model states its share too: $name', ({ cost, want }) => {
    expect(simAttentionShare({ ...DEFAULT_SIM_COST, ...cost })).toBeCloseTo(want, 9);
  });

  it('an H100 is faster at both, an A10 slower; scaling the GPU moves the bound it is on', () => {
    const h100 = rooflineCompute(GPUS.H100, llama8);
    const a10 = rooflineCompute(GPUS.A10, llama8);
    expect(h100.prefillMs(1, 2000, 0)).toBeLessThan(a100.prefillMs(1, 2000, 0));
    expect(a10.decodeMs(4, 4000)).toBeGreaterThan(a100.decodeMs(4, 4000));
    const slowMem = rooflineCompute(scaleGpu(GPUS.A100, { mem: 0.8 }), llama8);
    expect(slowMem.decodeMs(1, 1000)).toBeGreaterThan(a100.decodeMs(1, 1000));
    expect(slowMem.prefillMs(1, 4000, 0)).toBeCloseTo(a100.prefillMs(1, 4000, 0), 9);
  });
});
