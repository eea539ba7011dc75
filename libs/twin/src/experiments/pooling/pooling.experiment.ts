// Unified KV pooling's experiment on the twin (docs/twin-experiments.md §Unified pooling): one
// Long Doc QA request at a time, its document's KV offloaded earlier to host memory and NVMe, and
// the time to its first token when the KV is read back through LMCache-like file-per-chunk stores
// (plain, + layer-wise pipelining, + async loading) or through Mnemo's striped passthrough pool
// (kv-core's Eq. 1–2 placement).
import { kvBytesPerToken, MODELS } from '../../costs/hardware.tables.js';
import { baselineCheck, type BaselineCheck } from '../../report/baseline.check.js';
import {
  FILE_STORES,
  POOLING_CONFIG_NAMES,
  POOLING_PAPER,
  POOLING_SETUP,
  round,
  type FileStore,
  type PoolingConfigName,
  type PoolingSetup,
} from './pooling.setup.js';
import { poolingRequestTimes, ssdRetrievalMs, type RequestTimes } from './pooling.times.js';

/** Each configuration's request times by context length (tokens). */
export type PoolingCurves = Readonly<Record<PoolingConfigName, Readonly<Record<number, RequestTimes>>>>;

/** `f` of each of `keys`, in their order. */
function recordOf<K extends string, V>(keys: readonly K[], f: (k: K) => V): Record<K, V> {
  // Object.fromEntries types its keys as string: every key of K is there by construction.
  return Object.fromEntries(keys.map((k) => [k, f(k)])) as Record<K, V>;
}

/** Every configuration at every context length, and the keys. */
export function poolingExperiment(s: PoolingSetup = POOLING_SETUP) {
  const curves: PoolingCurves = recordOf(POOLING_CONFIG_NAMES, (c) =>
    Object.fromEntries(s.contexts.map((n) => [n, poolingRequestTimes(c, n, s)])),
  );
  const top = s.contexts[s.contexts.length - 1];
  const at = (c: PoolingConfigName, k: keyof RequestTimes): number => curves[c][top][k];
  const ratios = (k: keyof RequestTimes): Record<FileStore, number> => recordOf(FILE_STORES, (c) => round(at(c, k) / at('pool', k), 3));
  const ttftRatios = ratios('ttft_ms');
  const blockedRatios = ratios('blocked_io_ms');
  // Host vs SSD through the file store, per byte (§III-C reports 11×).
  const model = MODELS[s.model];
  const bytes = s.chunkTokens * kvBytesPerToken(model);
  const ssdFileMs = (s.nvme.dispatchMs + bytes / s.nvme.bytesPerMs) / (1 - s.filesystemShare);
  const paperGpuMs = (POOLING_PAPER.ttft_128k_s.pool - POOLING_PAPER.blocked_128k_s.pool) * 1000;
  const keys = {
    // Against the strongest file store (the paper's lowest ratio is against LMCache+LP+AsyncKV).
    ttft_128k_vs_file_store: Math.min(...Object.values(ttftRatios)),
    blocked_io_128k_vs_file_store: Math.min(...Object.values(blockedRatios)),
    ttft_128k_vs: ttftRatios,
    blocked_io_128k_vs: blockedRatios,
    striped_vs_single_device: round(ssdRetrievalMs(top, 1, s) / ssdRetrievalMs(top, 2, s), 3),
    ablation_128k_ttft_vs_full: {
      'orchestrator-only': round(at('orchestrator-only', 'ttft_ms') / at('pool', 'ttft_ms'), 3),
      'passthrough-only': round(at('passthrough-only', 'ttft_ms') / at('pool', 'ttft_ms'), 3),
    },
    ttft_128k_s: recordOf(POOLING_CONFIG_NAMES, (c) => round(at(c, 'ttft_ms') / 1000, 3)),
    blocked_io_128k_s: recordOf(POOLING_CONFIG_NAMES, (c) => round(at(c, 'blocked_io_ms') / 1000, 3)),
    // Not a headline: the paper's TTFT holds GPU time its blocked I/O does not (LLaMA-3.1-8B pooling at
    // 128K: 5.6 s − 0.6 s) that the twin does not model; added to both sides, the TTFT ratio would be this.
    ttft_128k_vs_file_store_with_paper_gpu_time: round(
      (at('lmcache-lp-async', 'ttft_ms') + paperGpuMs) / (at('pool', 'ttft_ms') + paperGpuMs),
      3,
    ),
    ssd_file_over_host_read: round(ssdFileMs / (bytes / s.ddr4BytesPerMs), 2),
    filesystem_factor: round(1 / (1 - s.filesystemShare), 3),
  };
  return {
    setup: { ...s, nvme: { ...s.nvme } },
    paper: POOLING_PAPER,
    curves,
    pooling: keys,
    baseline_check: poolingBaselineChecks(curves, top, s),
  };
}
export type PoolingResult = ReturnType<typeof poolingExperiment>;
export type PoolingKeys = PoolingResult['pooling'];

/**
 * The paper's published absolutes beside the twin's (error = twin ÷ paper − 1): §V-B at 128K on
 * LLaMA-3.1-8B (each store's TTFT and blocked I/O from the pool's 5.6 s and 0.6 s and the ratios to
 * it; the GPU time inside the pool's TTFT, 5.6 − 0.6 s) and §III's motivating run (LMCache with
 * layer-wise pipelining and async loading, Qwen3-30B-A3B at 128K: 30.7 s TTFT, 13.8 s blocked I/O).
 */
export function poolingBaselineChecks(curves: PoolingCurves, top: number, s: PoolingSetup = POOLING_SETUP): Record<string, BaselineCheck> {
  const at = (c: PoolingConfigName, k: keyof RequestTimes): number => curves[c][top][k] / 1000;
  const p = POOLING_PAPER;
  const gpu =
    "the twin's TTFT is retrieval plus the question's prefill (the roofline at the H100 row's efficiency, tens of ms); " +
    "the paper's holds about 5 s of GPU time (the pool's 5.6 s TTFT less its 0.6 s blocked I/O) that the twin cannot " +
    'attribute to any GPU work of the request';
  const io =
    "the paper's stores hide most of their retrieval under that GPU time (blocked I/O a tenth of TTFT); with no such GPU " +
    'time in the twin, all of retrieval is blocked';
  const checks: Record<string, BaselineCheck> = {
    v_b_gpu_time_128k_s: baselineCheck(
      p.ttft_128k_s.pool - p.blocked_128k_s.pool,
      at('pool', 'compute_ms'),
      '§V-B: 5.6 s TTFT − 0.6 s blocked I/O',
      gpu,
    ),
  };
  for (const c of ['pool', ...FILE_STORES] as const) {
    checks[`v_b_ttft_128k_s.${c}`] = baselineCheck(round(p.ttft_128k_s[c], 2), at(c, 'ttft_ms'), '§V-B, Fig. 8 (LLaMA-3.1-8B, 128K)', gpu);
    checks[`v_b_blocked_io_128k_s.${c}`] = baselineCheck(round(p.blocked_128k_s[c], 2), at(c, 'blocked_io_ms'), '§V-B, Fig. 9', io);
  }
  const moe = poolingRequestTimes('lmcache-lp-async', top, { ...s, model: 'qwen3-30b-a3b' });
  checks.iii_ttft_128k_qwen3_30b_a3b_s = baselineCheck(30.7, moe.ttft_ms / 1000, '§III, Fig. 7 (Qwen3-30B-A3B, 128K)', gpu);
  checks.iii_blocked_io_128k_qwen3_30b_a3b_s = baselineCheck(13.8, moe.blocked_io_ms / 1000, '§III, Fig. 7', io);
  return Object.fromEntries(Object.entries(checks).map(([k, v]) => [k.replace('.', '_'), v]));
}
