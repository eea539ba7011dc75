// The inputs of unified KV pooling's experiment on the twin (pooling.experiment.ts), each with its
// source: the paper's server, its published figures, and the configurations compared.
import { GPUS, MODELS, NVME_GEN4 } from '../../costs/hardware.tables.js';
import type { TransferLink } from '../../costs/transfer.port.js';

const GB = 1e9;

export interface PoolingSetup {
  readonly gpu: keyof typeof GPUS;
  readonly model: keyof typeof MODELS;
  /** One host memory module's bandwidth, bytes/ms. */
  readonly ddr4BytesPerMs: number;
  readonly ddr4Modules: number;
  /** One NVMe drive's read: command latency and bandwidth. */
  readonly nvme: TransferLink;
  readonly ssds: number;
  readonly hostPoolBytes: number;
  /** The kernel filesystem's share of an SSD read's time (§III-C). */
  readonly filesystemShare: number;
  readonly chunkTokens: number;
  readonly documents: number;
  readonly questionTokens: number;
  readonly contexts: readonly number[];
  /** The robustness table's knobs (1 when absent). */
  readonly flopsScale?: number;
  readonly pcieScale?: number;
}

/** The paper's server (§III-A) and the twin's stated assumptions beside it. */
export const POOLING_SETUP: PoolingSetup = {
  // §III-A: one H100-80GB; the hardware tables price it (H100 SXM datasheet figures, PCIe Gen5 host link).
  gpu: 'H100',
  // §V-A evaluates LLaMA-3.1-8B, GPT-OSS-20B and Qwen3-30B-A3B; the hardware tables hold the first.
  model: 'llama-3.1-8b',
  // §III-A: "two 64 GB DDR4 host-memory modules with a combined peak bandwidth of 21.3 GB/s": 10.65 GB/s each.
  ddr4BytesPerMs: 21.3e6 / 2,
  ddr4Modules: 2,
  // §III-A: two NVMe SSDs; the drive is the hardware tables' PCIe 4.0 datacenter part (6.8 GB/s read,
  // 80 µs per command at queue depth 1) — the paper names no drive model.
  nvme: NVME_GEN4.read,
  ssds: 2,
  // §III-A: 20 GB of host memory allocated to offloading (200 GB of SSD: never the limit here).
  hostPoolBytes: 20 * GB,
  // §III-C: 84% of SSD retrieval time is spent in the kernel filesystem, so a read through it takes
  // 1 / (1 − 0.84) = 6.25× the device's own time.
  filesystemShare: 0.84,
  // LMCache's default chunk: 256 tokens, one file per chunk on its local-disk backend.
  chunkTokens: 256,
  // Assumption: Long Doc QA keeps this many documents in rotation, each holding its share of the
  // host pool (20 GB ÷ 20 = 1 GB); the rest of a document's KV is on SSD. Both systems get the same
  // split, so the comparison isolates the paths the paper changes (striping and the filesystem).
  documents: 20,
  // Assumption: the question appended to the cached document, computed at prefill (tokens).
  questionTokens: 128,
  contexts: [1024, 2048, 4096, 8192, 16_384, 32_768, 65_536, 131_072],
  // The robustness table's knobs (pooling.robustness.ts): GPU FLOP/s and PCIe bandwidth scaled.
  flopsScale: 1,
  pcieScale: 1,
};

/** Each configuration compared, by name: the file stores, the pool, and the pool's two halves alone (the curves' order). */
export const POOLING_CONFIG_NAMES = ['lmcache', 'lmcache-lp', 'lmcache-lp-async', 'pool', 'orchestrator-only', 'passthrough-only'] as const;
export type PoolingConfigName = (typeof POOLING_CONFIG_NAMES)[number];
/** The file stores the pool is compared with, weakest first. */
export const FILE_STORES = ['lmcache', 'lmcache-lp', 'lmcache-lp-async'] as const satisfies readonly PoolingConfigName[];
export type FileStore = (typeof FILE_STORES)[number];

/**
 * The paper's published figures for LLaMA-3.1-8B at 128K (§V-B text: pooling's TTFT 5.6 s and
 * blocked I/O 0.6 s, and each baseline's ratio to it), the ablation (§V-C), §III-C's SSD÷host read.
 */
export const POOLING_PAPER = {
  ttft_128k_s: { pool: 5.6, lmcache: 5.6 * 2.9, 'lmcache-lp': 5.6 * 2.6, 'lmcache-lp-async': 5.6 * 2.1 },
  blocked_128k_s: { pool: 0.6, lmcache: 0.6 * 7.8, 'lmcache-lp': 0.6 * 2.7, 'lmcache-lp-async': 0.6 * 1.7 },
  ttft_vs_file_store_range: [2.1, 4.1],
  blocked_vs_file_store_range: [7.8, 23.2],
  ablation_128k: { 'orchestrator-only': 1.8, 'passthrough-only': 2.3 },
  ssd_over_host_read: 11,
} as const;

/**
 * One configuration: how many host modules and SSDs it reads from, whether SSD reads go through
 * the filesystem, whether GPU copies are pipelined per layer (LP), and whether the loader keeps
 * reads outstanding from the request's arrival (async: command latency hidden behind the previous
 * read, reads start one engine step early).
 */
export interface PoolingConfig {
  readonly modules: number;
  readonly ssds: number;
  readonly filesystem: boolean;
  readonly lp: boolean;
  readonly async: boolean;
  readonly striped: boolean;
}

export const POOLING_CONFIGS: Readonly<Record<PoolingConfigName, PoolingConfig>> = {
  lmcache: { modules: 1, ssds: 1, filesystem: true, lp: false, async: false, striped: false },
  'lmcache-lp': { modules: 1, ssds: 1, filesystem: true, lp: true, async: false, striped: false },
  'lmcache-lp-async': { modules: 1, ssds: 1, filesystem: true, lp: true, async: true, striped: false },
  pool: { modules: 2, ssds: 2, filesystem: false, lp: true, async: true, striped: true },
  'orchestrator-only': { modules: 2, ssds: 2, filesystem: true, lp: true, async: true, striped: true },
  'passthrough-only': { modules: 1, ssds: 1, filesystem: false, lp: true, async: true, striped: true },
};

/** `x` to `d` decimals; a non-finite `x` (a ratio over a zero) as it is, which a results file writes as null. */
export const round = (x: number, d = 4): number => (!Number.isFinite(x) ? x : Math.round(x * 10 ** d) / 10 ** d);
