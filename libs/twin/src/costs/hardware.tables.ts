import type { TransferLink } from './transfer.port.js';

/**
 * The modelled hardware as data: every figure comes from a specification or a microbenchmark,
 * named beside it (docs/twin-experiments.md §Hardware tables repeats them). None is set from an
 * end-to-end result an experiment then reproduces.
 */

const GB = 1e9;
const GiB = 1024 ** 3;

/** One GPU: dense bf16 tensor throughput, memory bandwidth and size, the host link's generation. */
export interface GpuSpec {
  readonly name: string;
  /** Dense bf16 tensor-core peak, FLOP/s. */
  readonly bf16Flops: number;
  /** Device memory bandwidth, bytes/s. */
  readonly memBytesPerS: number;
  /** Device memory, bytes. */
  readonly memBytes: number;
  readonly pcieGen: 4 | 5;
}

export const GPUS = {
  // NVIDIA A10 datasheet: 125 TFLOPS bf16 (250 with sparsity), 600 GB/s GDDR6, 24 GB, PCIe Gen4 x16.
  A10: { name: 'A10', bf16Flops: 125e12, memBytesPerS: 600 * GB, memBytes: 24 * GB, pcieGen: 4 },
  // NVIDIA A100 datasheet (SXM4 80GB): 312 TFLOPS bf16 dense, 2,039 GB/s HBM2e, 80 GB, PCIe Gen4 host link.
  A100: { name: 'A100-80GB', bf16Flops: 312e12, memBytesPerS: 2039 * GB, memBytes: 80 * GB, pcieGen: 4 },
  // NVIDIA H100 datasheet (SXM5): 989 TFLOPS bf16 dense (1,979 with sparsity), 3.35 TB/s HBM3, 80 GB, PCIe Gen5.
  H100: { name: 'H100-SXM', bf16Flops: 989e12, memBytesPerS: 3350 * GB, memBytes: 80 * GB, pcieGen: 5 },
  // NVIDIA H20 product brief: 148 TFLOPS bf16 dense, 4.0 TB/s HBM3, 96 GB. Host link: SwiftCache §5's testbed
  // (PCIe 4.0, 32 GB/s shared by its four GPUs — see PCIE4_SHARED_BY).
  H20: { name: 'H20-96GB', bf16Flops: 148e12, memBytesPerS: 4000 * GB, memBytes: 96 * GB, pcieGen: 4 },
  // NVIDIA H200 datasheet (SXM): 989 TFLOPS bf16 dense (Hopper, as the H100 SXM), 4.8 TB/s HBM3e, 141 GB, PCIe Gen5.
  // The one GPU this project has measured (bench/results/engine-cuda.json: 150 GB visible, Gen5 x16 link).
  H200: { name: 'H200-SXM', bf16Flops: 989e12, memBytesPerS: 4800 * GB, memBytes: 141 * GB, pcieGen: 5 },
} as const satisfies Record<string, GpuSpec>;

/** One decoder-only model in bf16: what its FLOPs, weight bytes and KV bytes follow from. */
export interface ModelSpec {
  readonly name: string;
  readonly params: number;
  readonly layers: number;
  readonly hidden: number;
  readonly kvHeads: number;
  readonly headDim: number;
  /** Bytes per element (bf16: 2). */
  readonly dtypeBytes: number;
  /** MLP intermediate width (what a prefill's activation peak follows from); absent where no experiment needs it. */
  readonly intermediate?: number;
  /** A mixture-of-experts model's parameters active per token (what its FLOPs follow from); absent: all of them. */
  readonly activeParams?: number;
}

export const MODELS = {
  // Meta Llama-3.1-8B model card and config.json: 8.03 B parameters, 32 layers, hidden 4096, 8 KV heads of 128 (GQA).
  'llama-3.1-8b': { name: 'Llama-3.1-8B', params: 8.03e9, layers: 32, hidden: 4096, kvHeads: 8, headDim: 128, dtypeBytes: 2 },
  // Meta Llama-2-13B config.json: 13.0 B parameters, 40 layers, hidden 5120, 40 KV heads of 128 (no GQA).
  'llama-2-13b': { name: 'Llama-2-13B', params: 13.0e9, layers: 40, hidden: 5120, kvHeads: 40, headDim: 128, dtypeBytes: 2 },
  // LWM-Text-1M (SwiftCache §5: Llama-2-7B's architecture, MHA): Llama-2-7B config.json — 6.74 B parameters,
  // 32 layers, hidden 4096, 32 KV heads of 128, intermediate 11008 (0.5 MB of KV per token, SwiftCache Table 2).
  'lwm-7b': { name: 'LWM-7B', params: 6.74e9, layers: 32, hidden: 4096, kvHeads: 32, headDim: 128, dtypeBytes: 2, intermediate: 11_008 },
  // Qwen3-8B model card and config.json: 8.19 B parameters, 36 layers, hidden 4096, 8 KV heads of 128, intermediate 12288.
  'qwen3-8b': { name: 'Qwen3-8B', params: 8.19e9, layers: 36, hidden: 4096, kvHeads: 8, headDim: 128, dtypeBytes: 2, intermediate: 12_288 },
  // Qwen3-14B model card and config.json: 14.8 B parameters, 40 layers, hidden 5120, 8 KV heads of 128, intermediate 17408.
  'qwen3-14b': {
    name: 'Qwen3-14B',
    params: 14.8e9,
    layers: 40,
    hidden: 5120,
    kvHeads: 8,
    headDim: 128,
    dtypeBytes: 2,
    intermediate: 17_408,
  },
  // Qwen3-30B-A3B model card and config.json (mixture of experts): 30.5 B parameters, 3.3 B active per token,
  // 48 layers, hidden 2048, 4 KV heads of 128. Every weight is read per step; FLOPs follow the active ones.
  'qwen3-30b-a3b': {
    name: 'Qwen3-30B-A3B',
    params: 30.5e9,
    activeParams: 3.3e9,
    layers: 48,
    hidden: 2048,
    kvHeads: 4,
    headDim: 128,
    dtypeBytes: 2,
  },
} as const satisfies Record<string, ModelSpec>;

/** KV bytes of one token over all layers: K and V of every KV head (Llama-3.1-8B: 128 KiB). */
export const kvBytesPerToken = (m: ModelSpec): number => 2 * m.layers * m.kvHeads * m.headDim * m.dtypeBytes;

/**
 * How much of the peaks a serving engine reaches: one value per GPU row (GPU_EFFICIENCY), set
 * before any experiment ran and never fitted to one. Swept ±20% by the robustness tables.
 */
export interface Efficiency {
  /** Model FLOPs utilisation of prefill's linear layers (the GEMMs). */
  readonly mfu: number;
  /**
   * Fraction of the tensor peak causal attention reaches. Where a row has no measurement of its own
   * it is the GEMMs' `mfu` (attention priced by the same roofline).
   */
  readonly attnEff?: number;
  /** Fraction of the memory bandwidth decode streams at. */
  readonly memEff: number;
  /** Fixed per engine call (launches, sampling, the scheduler step), ms. */
  readonly stepMs: number;
}

/**
 * The stated assumption for a GPU this project has not measured: prefill GEMMs at thousands of rows
 * near half the tensor peak in vLLM-class engines, decode streaming weights and KV at most of the
 * memory bandwidth, 1 ms per engine call (launches, sampling, the scheduler step).
 */
export const DEFAULT_EFFICIENCY: Efficiency = { mfu: 0.5, memEff: 0.8, stepMs: 1 };

/**
 * The H200's row, measured (bench/results/engine-cuda.json, cuBLAS bf16 through the engine's GEMM path):
 * - mfu: the median over Llama-3.1-8B's projection shapes at m ≥ 512 rows (`gemm[]`, 708–815 TFLOPS,
 *   median 770.65) ÷ 989 TFLOPS = 0.779 (the GEMMs alone);
 * - attnEff: causal attention over whole prompts of 8K–128K tokens at Llama-3.1-8B's heads, the
 *   fastest of PyTorch's backends (cuDNN's), median 631.4 TFLOPS ÷ 989 = 0.638
 *   (bench/results/engine-cuda-prefill.json, `attention_eff`): below the GEMMs', so a long prompt's
 *   attention is not priced at their rate;
 * - memEff: the decode GEMV that streams the most weight bytes (gate_up at m = 1: 28,672 × 4,096 × 2 B
 *   in 0.0575 ms = 4.08 TB/s) ÷ 4.8 TB/s = 0.851;
 * - stepMs: not measured there, the stated 1 ms.
 * A unit test recomputes both from the results file.
 */
export const H200_MEASURED_EFFICIENCY: Efficiency = {
  mfu: 770.65 / 989,
  attnEff: 0.6384,
  memEff: (28_672 * 4096 * 2) / 0.0575e-3 / 4800e9,
  stepMs: 1,
};

/** One efficiency per GPU row: measured where this project measured the GPU, the stated assumption elsewhere. */
export const GPU_EFFICIENCY: Record<keyof typeof GPUS, Efficiency> = {
  A10: DEFAULT_EFFICIENCY,
  A100: DEFAULT_EFFICIENCY,
  H100: DEFAULT_EFFICIENCY,
  H20: DEFAULT_EFFICIENCY,
  H200: H200_MEASURED_EFFICIENCY,
};

/** The efficiency of a GPU row, by its name (a row scaled by the robustness table keeps its name). */
export function efficiencyOf(gpu: GpuSpec): Efficiency {
  const key = (Object.keys(GPUS) as Array<keyof typeof GPUS>).find((k) => GPUS[k].name === gpu.name);
  return key ? GPU_EFFICIENCY[key] : DEFAULT_EFFICIENCY;
}

/** Device KV blocks of 16 tokens vLLM-style: `utilization` of memory, less weights and an activation reserve. */
export function deviceKvBlocks(gpu: GpuSpec, model: ModelSpec, o: { utilization?: number; reserveBytes?: number } = {}): number {
  const free = gpu.memBytes * (o.utilization ?? 0.9) - model.params * model.dtypeBytes - (o.reserveBytes ?? 2 * GiB);
  return Math.max(0, Math.floor(free / (16 * kvBytesPerToken(model))));
}

/**
 * Host ↔ device links. Nominal x16 rates from the PCI-SIG specifications (Gen4 16 GT/s ≈ 31.5 GB/s,
 * Gen5 32 GT/s ≈ 63 GB/s per direction). The fraction reached, per generation:
 * - Gen5: this project's own measurement (bench/results/engine-cuda.json on an H200, Gen5 x16:
 *   `link.plain_h2d_gbs` 55.3 GB/s = 0.878 of 63 GB/s);
 * - Gen4: the BaM paper's measured peak of an A100's Gen4 x16 link, 25 GB/s (Qureshi et al.,
 *   "GPU-Initiated On-Demand High-Throughput Storage Access in the BaM System Architecture",
 *   ASPLOS '23, §5) = 0.794 of 31.5 GB/s; NCCL's topology model prices the same link at 24 GB/s.
 * The per-call dispatch of Mnemo's C++ copy path measured on the H200 is 2.47 µs
 * (`swap_dispatch_us_per_call`, fitted over the swap sizes; `dispatch_fit.h2d` alone gives 2.82 µs).
 */
export const PCIE_NOMINAL_BYTES_PER_S = { 4: 31.5 * GB, 5: 63 * GB } as const;
export const PCIE_EFFICIENCY = { 4: 25 / 31.5, 5: 55.3 / 63 } as const;
/** Gen5's, measured here: kept under its old name for the links priced from it (NVLink). */
export const PCIE_MEASURED_EFFICIENCY = PCIE_EFFICIENCY[5];
export const MEASURED_DISPATCH_MS = 0.00247;

export function pcieLink(gen: 4 | 5, dispatchMs = MEASURED_DISPATCH_MS): TransferLink {
  return { dispatchMs, bytesPerMs: (PCIE_NOMINAL_BYTES_PER_S[gen] * PCIE_EFFICIENCY[gen]) / 1000 };
}

/**
 * FastSwitch's reading of vLLM's per-block swap (Table 1: 122,030 block copies of 128 KB in 15.5 s;
 * §2.2: a copy executes in about 10 µs, dispatch is 90–95% of the total). Per call: 15.5 s / 122,030
 * = 127 µs, of which 127 − 10 = 117 µs dispatch (92%, inside §2.2's band). §2.2 alone bounds it
 * to 10·0.90/0.10 = 90 µs … 10·0.95/0.05 = 190 µs.
 */
export const FASTSWITCH_TABLE1 = { blocks: 122_030, seconds: 15.5, copyUs: 10 } as const;
export function derivedDispatchMs(t = FASTSWITCH_TABLE1): number {
  return ((t.seconds * 1e6) / t.blocks - t.copyUs) / 1000;
}
export function dispatchBandMs(copyUs = FASTSWITCH_TABLE1.copyUs, share: readonly [number, number] = [0.9, 0.95]): [number, number] {
  return [(copyUs * share[0]) / (1 - share[0]) / 1000, (copyUs * share[1]) / (1 - share[1]) / 1000];
}

/** How many GPUs share one PCIe 4.0 host link of 32 GB/s in SwiftCache's testbed (§5). */
export const PCIE4_SHARED_BY = 4;

/**
 * GPU ↔ GPU inside one server: SwiftCache §5's testbed, NVLink at 400 GB/s bidirectional, so 200 GB/s
 * each way. The fraction reached is taken to be PCIe's measured one (0.88, not measured on NVLink here);
 * one call per layer stream at Mnemo's measured copy dispatch.
 */
export const NVLINK_SWIFTCACHE_BYTES_PER_S = 200 * GB;
export function nvlinkLink(dispatchMs = MEASURED_DISPATCH_MS): TransferLink {
  return { dispatchMs, bytesPerMs: (NVLINK_SWIFTCACHE_BYTES_PER_S * PCIE_MEASURED_EFFICIENCY) / 1000 };
}

/** Between nodes: Symphony §4's testbed link, 100 Gb/s Ethernet (12.5 GB/s), one call per layer stream at a stated 50 µs. */
export const NETWORK_100G: TransferLink = { dispatchMs: 0.05, bytesPerMs: 12.5e6 };

/**
 * GPU-to-GPU between nodes over InfiniBand, one adapter per GPU. HDR: NVIDIA ConnectX-6 datasheet,
 * 200 Gb/s per port = 25 GB/s; Azure's ND96amsr_A100_v4 (the VM DroidSpeak §5.1 ran on) has one
 * 200 Gb/s HDR link per A100 (Azure ND A100 v4-series page: "1.6 Tb/s of interconnect bandwidth per VM").
 * NDR: ConnectX-7 datasheet, 400 Gb/s = 50 GB/s, the H100 generation's. DroidSpeak §2.4 quotes the
 * same 25–50 GB/s per GPU pair. One call per layer stream at a stated 50 µs, as NETWORK_100G.
 */
export const INFINIBAND = {
  HDR: { dispatchMs: 0.05, bytesPerMs: 25e6 },
  NDR: { dispatchMs: 0.05, bytesPerMs: 50e6 },
} as const satisfies Record<string, TransferLink>;

/**
 * A PCIe 4.0 datacenter NVMe drive (typical vendor sheets for 3.84 TB parts: ≈ 6.8 GB/s sequential
 * read, ≈ 4 GB/s write; ≈ 80 µs per read command at queue depth 1).
 */
export const NVME_GEN4 = {
  read: { dispatchMs: 0.08, bytesPerMs: 6.8e6 },
  write: { dispatchMs: 0.02, bytesPerMs: 4e6 },
} as const satisfies Record<string, TransferLink>;

/** Host memory per node (Symphony §4: 256 GB DRAM for 4 GPUs; FastSwitch §4: 60 GB of swap space per GPU). */
export const HOST_MEMORY = { symphonyNodeBytes: 256 * GB, gpusPerSymphonyNode: 4, fastswitchSwapBytes: 60 * GB } as const;
