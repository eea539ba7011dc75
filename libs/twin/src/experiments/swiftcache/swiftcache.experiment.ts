// SwiftCache's experiment on the twin (docs/twin-experiments.md §SwiftCache): the master's maximum
// context at the paper's memory points (Fig. 9), its P99 TTFT on long histories against PCIe CPU
// offload (Fig. 7), and the master's KV traffic's share of the workers' HBM and NVLink time (Fig. 8).
// Policies are kv-core's (the elastic-cache coordinator's Algorithm 1 and LCM units, the layer
// stream's Eq. 2–5); costs are the hardware tables'.
import { kvBytesPerToken } from '../../costs/hardware.tables.js';
import { layerwisePrefillMs } from '../../costs/layerwise.load.js';
import { rooflineCompute } from '../../costs/roofline.compute.js';
import { maxContextExperiment, type MaxContextPoint } from './max-context.experiment.js';
import {
  roundTo,
  SWIFTCACHE_PAPER,
  SWIFTCACHE_SETUP,
  swiftcacheHardware,
  type SwiftcacheHardware,
  type SwiftcacheSetup,
} from './swiftcache.setup.js';
import { ttftExperiment, type TtftExperiment } from './ttft.experiment.js';

const round = (x: number, d = 4) => roundTo(x, d);

/** A worker's HBM and NVLink time taken by the master's bytes, as shares of the span. */
export interface WorkerShare {
  readonly hbm: number;
  readonly nvlink: number;
}

export interface InterferenceAtLength {
  readonly tokens: number;
  readonly service_ms: number;
  readonly hbm_share: number;
  readonly nvlink_share: number;
  readonly per_worker: readonly WorkerShare[];
}

export interface SwiftcacheKeys {
  readonly max_context_vs_chunked8k: number;
  readonly ttft_p99_vs_offload: number;
  readonly worker_interference: number;
  readonly max_context_vs_chunked8k_by_gb: Readonly<Record<string, number>>;
  readonly max_context_eq5_vs_chunked8k_by_gb: Readonly<Record<string, number>>;
  readonly max_context_vs_chunked8k_qwen3_8b_master_by_gb: Readonly<Record<string, number>>;
  readonly max_context_vs_chunked32k_by_gb: Readonly<Record<string, number>>;
  readonly max_context_vs_no_chunking_by_gb: Readonly<Record<string, number>>;
  readonly ttft_p99_vs_offload_by_rate: Readonly<Record<string, number>>;
  readonly ttft_p99_reduction_vs_offload: number;
  readonly ttft_p99_vs_offload_lend_idle: number;
  readonly ttft_p99_vs_offload_lend_idle_by_rate: Readonly<Record<string, number>>;
  readonly ttft_p99_vs_offload_live_only: number;
  readonly ttft_p99_vs_offload_live_only_by_rate: Readonly<Record<string, number>>;
  readonly worker_nvlink_share: number;
  readonly worker_hbm_share_by_length: Readonly<Record<string, number>>;
}

export interface SwiftcacheExperiment {
  readonly setup: SwiftcacheSetup & {
    readonly hardware: Pick<SwiftcacheHardware, 'gpu' | 'master'> & {
      readonly nvlink_bytes_per_ms: number;
      readonly pcie_bytes_per_ms: number;
      readonly pcie_shared_by: number;
      readonly dispatch_ms: number;
    };
  };
  readonly paper: typeof SWIFTCACHE_PAPER;
  readonly max_context: readonly MaxContextPoint[];
  readonly max_context_qwen3_8b_master: readonly MaxContextPoint[];
  readonly ttft: TtftExperiment;
  readonly interference: {
    readonly lengths: readonly InterferenceAtLength[];
    readonly ttft_runs: readonly { readonly rate_per_s: number; readonly hbm_share: number; readonly nvlink_share: number }[];
    readonly lent_share_at_96gb: readonly number[];
  };
  readonly swiftcache: SwiftcacheKeys;
}

/** A worker's HBM and NVLink time taken by `bytes` of the master's KV over `spanMs`. */
function shares(bytes: number, spanMs: number, hw: SwiftcacheHardware): WorkerShare {
  const compute = rooflineCompute(hw.gpu, hw.master);
  const hbmBytesPerMs = (hw.gpu.memBytesPerS * compute.efficiency.memEff) / 1000;
  return { hbm: round(bytes / hbmBytesPerMs / spanMs), nvlink: round(bytes / hw.nvlink.bytesPerMs / spanMs) };
}

/**
 * Fig. 8's worst case: the master serves requests back to back whose history (16K–64K tokens) is
 * all in lent memory, a ShareGPT-mean turn each; every byte is read from the lenders (and the turn's
 * new KV written back), split as each worker lends (`lentShare`).
 */
export function interferenceAtLength(
  tokens: number,
  lentShare: readonly number[],
  s: SwiftcacheSetup = SWIFTCACHE_SETUP,
  hw: SwiftcacheHardware = swiftcacheHardware(s),
): InterferenceAtLength {
  const m = hw.master;
  const kv = kvBytesPerToken(m);
  const compute = rooflineCompute(hw.gpu, m);
  const step = compute.efficiency.stepMs;
  const turn = 161;
  const prefill = compute.prefillMs(1, turn, turn * tokens + (turn * (turn + 1)) / 2) - step;
  const loadPerLayer = hw.nvlink.dispatchMs + (tokens * kv) / m.layers / hw.nvlink.bytesPerMs;
  const serviceMs = layerwisePrefillMs(m.layers, loadPerLayer, prefill / m.layers) + step;
  const bytes = (tokens + turn) * kv;
  const perWorker = lentShare.map((f) => shares(bytes * f, serviceMs, hw));
  return {
    tokens,
    service_ms: round(serviceMs, 2),
    hbm_share: Math.max(...perWorker.map((p) => p.hbm)),
    nvlink_share: Math.max(...perWorker.map((p) => p.nvlink)),
    per_worker: perWorker,
  };
}

/** The whole experiment and its keys. `progress(label)` is told before each step. */
export function swiftcacheExperiment(
  s: SwiftcacheSetup = SWIFTCACHE_SETUP,
  progress: (label: string) => void = () => {},
): SwiftcacheExperiment {
  const hw = swiftcacheHardware(s);
  const context = maxContextExperiment(s, progress);
  // The other master shape: Qwen3-8B (GQA, 144 KiB per token) with the same workers.
  const qwenMaster = maxContextExperiment({ ...s, master: 'qwen3-8b' });
  const ttft = ttftExperiment(s, progress);
  const at96 = context.find((c) => c.gb === 96) ?? context[0];
  const lent = Object.values(at96.lent_master_blocks);
  const lentShare = lent.map(
    (b) =>
      b /
      Math.max(
        1,
        lent.reduce((a, x) => a + x, 0),
      ),
  );
  progress('interference');
  const lengths = s.interferenceLengths.map((n) => interferenceAtLength(n, lentShare, s, hw));
  // The TTFT runs' own traffic: each lender's bytes over the measured span.
  const runShares = ttft.rates.map((r) => {
    const per = (r.swiftcache.per_worker_bytes ?? []).map((b) => shares(b, r.swiftcache.span_s * 1000, hw));
    return { rate_per_s: r.rate_per_s, hbm_share: Math.max(...per.map((p) => p.hbm)), nvlink_share: Math.max(...per.map((p) => p.nvlink)) };
  });
  // The headline P99 ratio: the lowest over the rates at which the offloading baseline is stable
  // (its GPU busy under 80% of the time): a queue near saturation would multiply any difference.
  const stable = ttft.rates.filter((r) => r.offload.utilization < 0.8);
  const headline = stable.length ? stable : ttft.rates;
  const ratios = headline.map((r) => r.p99_ratio);
  const byRate = (f: (r: (typeof ttft.rates)[number]) => number) =>
    Object.fromEntries(ttft.rates.map((r) => [`${r.rate_per_s * 60}/min`, f(r)]));
  const keys: SwiftcacheKeys = {
    max_context_vs_chunked8k: at96.vs_chunked8k,
    ttft_p99_vs_offload: Math.min(...ratios),
    worker_interference: Math.max(...lengths.map((l) => l.hbm_share), ...runShares.map((r) => r.hbm_share)),
    max_context_vs_chunked8k_by_gb: Object.fromEntries(context.map((c) => [c.gb, c.vs_chunked8k])),
    max_context_eq5_vs_chunked8k_by_gb: Object.fromEntries(context.map((c) => [c.gb, c.eq5_vs_chunked8k])),
    max_context_vs_chunked8k_qwen3_8b_master_by_gb: Object.fromEntries(qwenMaster.map((c) => [c.gb, c.vs_chunked8k])),
    max_context_vs_chunked32k_by_gb: Object.fromEntries(context.map((c) => [c.gb, c.vs_chunked32k])),
    max_context_vs_no_chunking_by_gb: Object.fromEntries(context.map((c) => [c.gb, c.vs_no_chunking])),
    ttft_p99_vs_offload_by_rate: byRate((r) => r.p99_ratio),
    ttft_p99_reduction_vs_offload: round(1 - 1 / Math.min(...ratios), 3),
    ttft_p99_vs_offload_lend_idle: Math.min(...headline.map((r) => r.p99_ratio_lend_idle)),
    ttft_p99_vs_offload_lend_idle_by_rate: byRate((r) => r.p99_ratio_lend_idle),
    ttft_p99_vs_offload_live_only: Math.min(...headline.map((r) => r.p99_ratio_live_only)),
    ttft_p99_vs_offload_live_only_by_rate: byRate((r) => r.p99_ratio_live_only),
    worker_nvlink_share: Math.max(...lengths.map((l) => l.nvlink_share), ...runShares.map((r) => r.nvlink_share)),
    worker_hbm_share_by_length: Object.fromEntries(lengths.map((l) => [l.tokens, l.hbm_share])),
  };
  return {
    setup: {
      ...s,
      hardware: {
        gpu: hw.gpu,
        master: hw.master,
        nvlink_bytes_per_ms: hw.nvlink.bytesPerMs,
        pcie_bytes_per_ms: hw.pcie.bytesPerMs,
        pcie_shared_by: hw.pcieSharedBy,
        dispatch_ms: hw.nvlink.dispatchMs,
      },
    },
    paper: SWIFTCACHE_PAPER,
    max_context: context,
    max_context_qwen3_8b_master: qwenMaster,
    ttft,
    interference: { lengths, ttft_runs: runShares, lent_share_at_96gb: lentShare.map((f) => round(f, 3)) },
    swiftcache: keys,
  };
}
