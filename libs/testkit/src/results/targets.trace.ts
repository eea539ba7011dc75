// Headline keys and targets of the micro-benchmarks and the trace replay (live and twin): see targets.ts.
import { above, atLeast, atMost, below, equals, type BenchmarkTargets, type HeadlineKey } from './targets.types.js';

export const TRACE_TARGETS: Record<string, BenchmarkTargets> = {
  'pool-devices': { what: "The native pool devices' copy, gather and O_DIRECT figures", keys: [] },
  'kv-policy': { what: 'kv-core policy structures: per-operation costs', keys: [] },
  'tiers-ab': { what: 'A/B rounds of tier read variants on the same pool', keys: [] },
  'tiers-profile': {
    what: "Where a tier get and put spend their time: the store's paths under perf, CPU samples sorted into data-path parts",
    keys: [
      { path: 'ssd_get.cpu_per_wall', what: 'SSD get: CPU seconds (all threads) per wall second' },
      { path: 'ssd_put.cpu_per_wall', what: 'SSD put: CPU seconds (all threads) per wall second' },
      { path: 'ssd_get.ssd_peak_in_flight', what: 'SSD get: most requests in flight on the device' },
    ],
  },
  trace: {
    what:
      "A slice of Mooncake's conversation trace replayed open-loop through a real cluster (NATS, scheduler, four sim " +
      "node-managers) once per scheduler policy, the twin's prefill pool on the same slice beside each pass (docs/traces.md §4)",
    keys: [
      { path: 'keys.hit_rate_gap_max', what: 'largest |live − twin| hit rate over the policies', target: atMost(0.05) },
      {
        path: 'keys.order_agrees',
        what: 'live and twin order the policies alike by mean TTFT on every pair the live passes separate (means > 10% apart)',
        target: equals(true),
      },
      { path: 'keys.separated_pairs', what: 'policy pairs the live passes separate' },
      ...['least-loaded', 'local', 'conductor', 'llmd', 'symphony'].flatMap((p): HeadlineKey[] => [
        { path: `policies.${p}.live.ttft_mean_ms`, what: `${p}: live mean TTFT, ms` },
        { path: `policies.${p}.live.hit_rate`, what: `${p}: live share of prompt tokens served from cache` },
        { path: `policies.${p}.twin.hit_rate`, what: `${p}: the twin's on the same slice` },
      ]),
      { path: 'symphony_vs_conductor.ttft_mean', what: 'conductor ÷ symphony live mean TTFT, all passes pooled' },
      { path: 'symphony_vs_conductor.ttft_p99', what: 'conductor ÷ symphony live p99 TTFT, all passes pooled' },
      {
        path: 'routing_check.never_behind',
        what:
          'symphony at least as good as conductor at mean and p99 TTFT: every pass within the A-A spread of two symphony ' +
          'passes, the median over passes ≥ 1 (the routing issue)',
        target: equals(true),
      },
      { path: 'keys.failed', what: 'requests that failed, all passes', target: equals(0) },
      { path: 'wall_s', what: 'wall seconds of every live pass (2 shared cores)', target: atMost(900) },
    ],
  },
  'twin-trace-mooncake-conversation_trace': {
    what:
      "Mooncake's published FAST'25 conversation trace (12,031 requests, one hour) through the twin's prefill pool: " +
      'LLaMA3-70B on modelled 8 × A800 instances, Figs. 5, 9 and 10 against the paper, ' +
      "replayed at the trace's own timestamps with nothing fitted (docs/traces.md)",
    keys: [
      { path: 'trace.requests', what: 'requests replayed (the whole hour)', target: equals(12031) },
      {
        path: 'trace.max_hit_rate',
        what: "share of prompt tokens an unbounded cache could reuse (Table 2's cache ratio: 40%, within 0.05)",
        target: atLeast(0.35),
      },
      { path: 'setup.time_scale', what: "arrivals × this (1: the trace's own timestamps, as the paper replays it; nothing fitted)" },
      {
        path: 'paper_check.fig5_local_ttft_ms.twin',
        what: 'Fig. 5: local cache-aware mean TTFT, ms (paper 3,580; rests on the instance speed too)',
      },
      {
        path: 'paper_check.fig5_local_ttft_ms.error',
        what: 'that absolute TTFT: twin ÷ paper − 1 (reported, not a target: docs/traces.md)',
      },
      ...[
        ['fig5_random_over_local', 'Fig. 5: random ÷ local cache-aware mean TTFT (paper 5.49)'],
        ['fig5_leastloaded_over_local', 'Fig. 5: least-loaded ÷ local cache-aware mean TTFT (paper 1.47)'],
        ['fig5_global_over_local', 'Fig. 5: conductor (global cache-aware) ÷ local cache-aware mean TTFT (paper 0.86)'],
        ['fig10_global_over_local_hit', 'Fig. 10: global ÷ local cache hit rate, 10 nodes × 3M tokens (paper 2.22)'],
        ['fig10_global_over_local_prefill', 'Fig. 10: global ÷ local mean prefill GPU time (paper 0.76)'],
      ].flatMap(([k, what]): HeadlineKey[] => [
        { path: `paper_check.${k}.twin`, what },
        { path: `paper_check.${k}.within_25pct`, what: `${k}: within ±25% of the paper`, target: equals(true) },
      ]),
      {
        path: 'fig9.at_3m_over_max',
        what: 'Fig. 9: hit rate of one 3M-token cache ÷ the maximum (paper: under half)',
        target: below(0.5),
      },
      {
        path: 'fig9.at_50m_over_max',
        what: 'Fig. 9: hit rate of one 50M-token cache ÷ the maximum (paper: nearly all)',
        target: atLeast(0.9),
      },
      ...['symphony', 'conductor', 'local', 'llmd'].flatMap((p): HeadlineKey[] => [
        { path: `policies.${p}.ttft_mean_ms`, what: `${p}: mean TTFT at Fig. 5's scale (8 prefill instances of 16 nodes), ms` },
        { path: `policies.${p}.hit_rate`, what: `${p}: share of prompt tokens reused (own cache or moved from a peer)` },
      ]),
      {
        path: 'symphony_vs_conductor.ttft_mean',
        what: "conductor ÷ symphony mean TTFT on the whole trace at Fig. 5's scale (the routing issue's target: symphony ahead)",
        target: above(1),
      },
      { path: 'trace_wall_s', what: 'wall seconds of the whole command, every policy (2 shared cores)', target: atMost(1800) },
    ],
  },
  'twin-trace-mooncake-conversation_trace-fitted': {
    what:
      'The same replay with its one load parameter fitted (`--fit-ttft-ms 3580`): arrivals compressed until local ' +
      "cache-aware mean TTFT is the paper's 3.58 s, a labelled companion of the run as recorded (docs/traces.md)",
    keys: [
      { path: 'setup.fitted.value', what: "the fitted time scale (arrivals × this; 1 is the trace's own timing)" },
      { path: 'paper_check.fig5_local_ttft_ms.twin', what: 'local cache-aware mean TTFT it reached, ms (paper 3,580)' },
      ...['fig5_random_over_local', 'fig5_leastloaded_over_local', 'fig5_global_over_local', 'fig10_global_over_local_hit'].map(
        (k): HeadlineKey => ({ path: `paper_check.${k}.twin`, what: `${k} at the fitted load (reported, not a target)` }),
      ),
      ...['random', 'least-loaded', 'local'].map((p): HeadlineKey => ({
        path: `policies.${p}.offered_load`,
        what: `${p}: prefill work offered ÷ the pool's capacity`,
      })),
    ],
  },
};
