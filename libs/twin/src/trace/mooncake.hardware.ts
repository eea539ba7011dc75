import { CHUNK_TOKENS } from '@mnemo/kv-core';
import { DEFAULT_EFFICIENCY, GPUS, kvBytesPerToken, NVME_GEN4, pcieLink, PCIE_MEASURED_EFFICIENCY } from '../costs/hardware.tables.js';
import type { Efficiency, GpuSpec, ModelSpec } from '../costs/hardware.tables.js';
import { transferMs, type TransferLink } from '../costs/transfer.port.js';

/**
 * Mooncake FAST'25's testbed as twin rows (§8: LLaMA3-70B on nodes of 8 × A800-80GB with four
 * 200 Gb/s RDMA NICs). One prefill instance is one node's eight GPUs in tensor parallelism.
 */

// Meta Llama-3-70B config.json: 70.6 B parameters, 80 layers, hidden 8192, 8 KV heads of 128 (GQA), intermediate 28672.
// KV per token: 2 · 80 · 8 · 128 · 2 bytes = 320 KiB (the paper's "320 KB").
export const LLAMA3_70B: ModelSpec = {
  name: 'LLaMA3-70B',
  params: 70.6e9,
  layers: 80,
  hidden: 8192,
  kvHeads: 8,
  headDim: 128,
  dtypeBytes: 2,
  intermediate: 28_672,
};

// NVIDIA A800 80GB SXM datasheet: the A100-80GB's compute (312 TFLOPS bf16 dense) and HBM2e (2,039 GB/s, 80 GB);
// its NVLink is cut to 400 GB/s bidirectional (A100: 600), so 200 GB/s each way.
export const A800: GpuSpec = { ...GPUS.A100, name: 'A800-80GB' };
export const A800_NVLINK_BYTES_PER_S = 200e9;
/** The paper's nodes: four 200 Gb/s RDMA NICs = 100 GB/s per node. */
export const MOONCAKE_NODE_RDMA_BYTES_PER_S = (4 * 200e9) / 8;

export interface PrefillInstanceSpec {
  readonly gpu: GpuSpec;
  readonly model: ModelSpec;
  readonly tp: number;
  readonly efficiency: Efficiency;
}

export const MOONCAKE_INSTANCE: PrefillInstanceSpec = { gpu: A800, model: LLAMA3_70B, tp: 8, efficiency: DEFAULT_EFFICIENCY };

/** The costs one prefill instance runs on, ms. */
export interface PrefillCosts {
  /** Prefill of `tokens` new tokens after `prefix` cached ones (linear layers, attention, TP all-reduces). */
  prefillMs(tokens: number, prefix: number): number;
  /** Reading one chunk of KV from the node's DRAM onto its GPUs. */
  readonly hostChunkMs: number;
  /** Reading one chunk from the node's SSDs onto its GPUs. */
  readonly ssdChunkMs: number;
  /** Moving one chunk from another node's DRAM to this node over RDMA. */
  readonly peerChunkMs: number;
  readonly chunkBytes: number;
}

/**
 * The instance priced as a roofline over its `tp` GPUs, plus Megatron-style tensor parallelism's two
 * all-reduces of the activations per layer over NVLink (ring: each GPU moves 2·(tp−1)/tp of them;
 * not overlapped with compute, a stated assumption). Links reach PCIe's measured fraction of their
 * nominal rate (hardware.tables), also a stated assumption for NVLink and RDMA; the node's DRAM
 * reaches its GPUs over their eight PCIe links at once, its SSD tier over one NVMe drive per GPU.
 */
export function prefillCosts(s: PrefillInstanceSpec = MOONCAKE_INSTANCE): PrefillCosts {
  const flopsPerMs = (s.gpu.bf16Flops * s.tp * s.efficiency.mfu) / 1000;
  const linear = 2 * s.model.params;
  const attn = 4 * s.model.layers * s.model.hidden;
  const allReduceBytesPerToken = 2 * s.model.layers * ((2 * (s.tp - 1)) / s.tp) * s.model.hidden * s.model.dtypeBytes;
  const nvlinkBytesPerMs = (A800_NVLINK_BYTES_PER_S * PCIE_MEASURED_EFFICIENCY) / 1000;
  const chunkBytes = kvBytesPerToken(s.model) * CHUNK_TOKENS;
  const pcie = pcieLink(s.gpu.pcieGen);
  const spread = (l: TransferLink, n: number): TransferLink => ({ dispatchMs: l.dispatchMs, bytesPerMs: l.bytesPerMs * n });
  const rdma: TransferLink = { dispatchMs: 0.05, bytesPerMs: (MOONCAKE_NODE_RDMA_BYTES_PER_S * PCIE_MEASURED_EFFICIENCY) / 1000 };
  return {
    prefillMs: (tokens, prefix) =>
      tokens <= 0
        ? 0
        : (linear * tokens + attn * tokens * (prefix + tokens / 2)) / flopsPerMs +
          (tokens * allReduceBytesPerToken) / nvlinkBytesPerMs +
          s.efficiency.stepMs,
    hostChunkMs: transferMs(spread(pcie, s.tp), 1, chunkBytes),
    ssdChunkMs: transferMs(spread(NVME_GEN4.read, s.tp), 1, chunkBytes),
    peerChunkMs: transferMs(rdma, 1, chunkBytes),
    chunkBytes,
  };
}
