// The SwiftCache experiment's headline keys with each hardware figure at −20% and +20%: the H20's
// FLOP/s, its HBM bandwidth and size, NVLink's and the shared PCIe link's bandwidth. A conclusion
// that held only at the tables' exact values shows here as a key past its target.
import type { TargetCheck } from '../shared/experiment.ports.js';
import { swiftcacheExperiment, type SwiftcacheKeys } from './swiftcache.experiment.js';
import { SWIFTCACHE_SETUP, type SwiftcacheScale, type SwiftcacheSetup } from './swiftcache.setup.js';

/** The keys with a registered target, each judged at `swiftcache.<key>` (the two ratios are paper bands). */
export const SWIFTCACHE_HEADLINES = ['max_context_vs_chunked8k', 'ttft_p99_vs_offload', 'worker_interference'] as const;
export type SwiftcacheHeadline = (typeof SWIFTCACHE_HEADLINES)[number];

type HeadlineFigures = Record<SwiftcacheHeadline, number> &
  Pick<SwiftcacheKeys, 'ttft_p99_vs_offload_lend_idle' | 'ttft_p99_vs_offload_live_only'>;

export type SwiftcacheRobustnessRow = { readonly figure: string; readonly scale: number } & HeadlineFigures;
export type WorkerLiveTokensRow = { readonly figure: 'worker_live_tokens'; readonly tokens: number } & HeadlineFigures;

export interface SwiftcacheRobustness {
  readonly rows: readonly SwiftcacheRobustnessRow[];
  readonly targets_met_in_every_case: boolean;
  readonly max_context_vs_chunked8k_range: readonly [number, number];
  readonly ttft_p99_vs_offload_range: readonly [number, number];
  readonly worker_interference_range: readonly [number, number];
  readonly ttft_p99_vs_offload_lend_idle_range: readonly [number, number];
  readonly ttft_p99_vs_offload_live_only_range: readonly [number, number];
  readonly worker_live_tokens: { readonly rows: readonly WorkerLiveTokensRow[] };
}

const FIGURES: Readonly<Record<string, keyof SwiftcacheScale>> = {
  gpu_flops: 'flops',
  hbm_bandwidth: 'hbm',
  gpu_memory: 'mem',
  nvlink: 'nvlink',
  pcie: 'pcie',
};

/** Robustness cases run: each figure at two scales, then the workers' live tokens at two. */
export const SWIFTCACHE_ROBUSTNESS_CASES = Object.keys(FIGURES).length * 2 + 2;

const figures = (k: SwiftcacheKeys): HeadlineFigures => ({
  ...(Object.fromEntries(SWIFTCACHE_HEADLINES.map((key) => [key, k[key]])) as Record<SwiftcacheHeadline, number>),
  ttft_p99_vs_offload_lend_idle: k.ttft_p99_vs_offload_lend_idle,
  ttft_p99_vs_offload_live_only: k.ttft_p99_vs_offload_live_only,
});

/** The ±20% rows, each judged by `holds` on every headline; `progress(label)` is told before each case. */
export function swiftcacheRobustness(
  holds: TargetCheck,
  s: SwiftcacheSetup = SWIFTCACHE_SETUP,
  progress: (label: string) => void = () => {},
): SwiftcacheRobustness {
  const rows: SwiftcacheRobustnessRow[] = [];
  for (const [figure, knob] of Object.entries(FIGURES))
    for (const f of [0.8, 1.2]) {
      progress(`robustness ${figure} × ${f}`);
      const k = swiftcacheExperiment({ ...s, scale: { ...s.scale, [knob]: f } }).swiftcache;
      rows.push({ figure, scale: f, ...figures(k) });
    }
  // Apart from them, the stated assumption of what each worker keeps for its own chats (64 × 2K
  // tokens) halved and doubled: it sets how much the workers can lend.
  const workerRows = [0.5, 2].map((f): WorkerLiveTokensRow => {
    progress(`robustness worker_live_tokens × ${f}`);
    const k = swiftcacheExperiment({ ...s, workerLiveTokens: s.workerLiveTokens * f }).swiftcache;
    return { figure: 'worker_live_tokens', tokens: s.workerLiveTokens * f, ...figures(k) };
  });
  const range = (key: keyof HeadlineFigures): [number, number] => [
    Math.min(...rows.map((r) => r[key])),
    Math.max(...rows.map((r) => r[key])),
  ];
  const meets = (r: SwiftcacheRobustnessRow) => SWIFTCACHE_HEADLINES.every((key) => holds(`swiftcache.${key}`, r[key]));
  return {
    rows,
    targets_met_in_every_case: rows.every(meets),
    max_context_vs_chunked8k_range: range('max_context_vs_chunked8k'),
    ttft_p99_vs_offload_range: range('ttft_p99_vs_offload'),
    worker_interference_range: range('worker_interference'),
    ttft_p99_vs_offload_lend_idle_range: range('ttft_p99_vs_offload_lend_idle'),
    ttft_p99_vs_offload_live_only_range: range('ttft_p99_vs_offload_live_only'),
    worker_live_tokens: { rows: workerRows },
  };
}
