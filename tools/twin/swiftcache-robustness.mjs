// The SwiftCache experiment's headline keys with each hardware figure at −20% and +20%: the H20's
// FLOP/s, its HBM bandwidth and size, NVLink's and the shared PCIe link's bandwidth. A conclusion
// that held only at the tables' exact values shows here as a key past its target.
import { holds, targetOf } from '@mnemo/testkit';
import { SWIFTCACHE_SETUP } from './swiftcache.setup.mjs';
import { swiftcacheExperiment } from './swiftcache.mjs';

// The headline keys' targets as registered (the two ratios are paper bands).
export const SWIFTCACHE_TARGETS = Object.fromEntries(
  ['max_context_vs_chunked8k', 'ttft_p99_vs_offload', 'worker_interference'].map((k) => [
    k,
    targetOf('twin-swiftcache', `swiftcache.${k}`),
  ]),
);
const FIGURES = { gpu_flops: 'flops', hbm_bandwidth: 'hbm', gpu_memory: 'mem', nvlink: 'nvlink', pcie: 'pcie' };
const meets = (k) => Object.entries(SWIFTCACHE_TARGETS).every(([key, t]) => holds(k[key], t));

export function swiftcacheRobustness(s = SWIFTCACHE_SETUP, progress = () => {}) {
  const rows = [];
  for (const [figure, knob] of Object.entries(FIGURES))
    for (const f of [0.8, 1.2]) {
      progress(`robustness ${figure} × ${f}`);
      const k = swiftcacheExperiment({ ...s, scale: { ...s.scale, [knob]: f } }).swiftcache;
      rows.push({
        figure,
        scale: f,
        ...Object.fromEntries(Object.keys(SWIFTCACHE_TARGETS).map((key) => [key, k[key]])),
        ttft_p99_vs_offload_lend_idle: k.ttft_p99_vs_offload_lend_idle,
        ttft_p99_vs_offload_live_only: k.ttft_p99_vs_offload_live_only,
      });
    }
  // Apart from them, the stated assumption of what each worker keeps for its own chats (64 × 2K
  // tokens) halved and doubled: it sets how much the workers can lend.
  const workerRows = [0.5, 2].map((f) => {
    progress(`robustness worker_live_tokens × ${f}`);
    const k = swiftcacheExperiment({ ...s, workerLiveTokens: s.workerLiveTokens * f }).swiftcache;
    return {
      figure: 'worker_live_tokens',
      tokens: s.workerLiveTokens * f,
      ...Object.fromEntries(Object.keys(SWIFTCACHE_TARGETS).map((key) => [key, k[key]])),
      ttft_p99_vs_offload_lend_idle: k.ttft_p99_vs_offload_lend_idle,
      ttft_p99_vs_offload_live_only: k.ttft_p99_vs_offload_live_only,
    };
  });
  const range = (key) => [Math.min(...rows.map((r) => r[key])), Math.max(...rows.map((r) => r[key]))];
  return {
    rows,
    targets: SWIFTCACHE_TARGETS,
    targets_met_in_every_case: rows.every(meets),
    ...Object.fromEntries(Object.keys(SWIFTCACHE_TARGETS).map((key) => [`${key}_range`, range(key)])),
    ttft_p99_vs_offload_lend_idle_range: range('ttft_p99_vs_offload_lend_idle'),
    ttft_p99_vs_offload_live_only_range: range('ttft_p99_vs_offload_live_only'),
    worker_live_tokens: { rows: workerRows },
  };
}
