// Headline keys and targets of the twin's paper experiments: see targets.ts.
import { atLeast, atMost, metInEveryCase, paperBand, rangeOverCases, type BenchmarkTargets, type HeadlineKey } from './targets.types.js';

const POOLING_CAUSE =
  "the twin's TTFT holds no GPU time beside the question's prefill, so nothing hides the file stores' serialized retrieval; " +
  "the paper's ~5 s of GPU time (5.6 s TTFT, 0.6 s blocked I/O for the pool) hides most of it (baseline_check.v_b_*)";

const LOOSER_FLOOR = 'a looser floor than the paper’s 1%';

export const PAPER_TARGETS: Record<string, BenchmarkTargets> = {
  'twin-pooling': {
    what:
      "Unified KV pooling's experiment on the twin (npm run twin -- pooling): one Long Doc QA request at a time, " +
      '1K–128K tokens, Llama-3.1-8B on a modelled H100 with two DDR4 modules and two NVMe drives; LMCache-like ' +
      "file-per-chunk stores (+ layer-wise pipelining, + async loading) against Mnemo's striped passthrough pool with " +
      "kv-core's Eq. 1–2 placement; costs from the hardware tables and the paper's §III (docs/twin-experiments.md)",
    keys: [
      {
        path: 'pooling.ttft_128k_vs_file_store',
        what: 'TTFT at 128K, the strongest file store (LMCache+LP+AsyncKV-like) ÷ the striped passthrough pool (paper Fig. 8: 2.1–4.1×)',
        target: paperBand(2.1, 4.1, POOLING_CAUSE),
      },
      {
        path: 'pooling.blocked_io_128k_vs_file_store',
        what: 'blocked I/O at 128K, the strongest file store ÷ the pool (paper §V-B, LLaMA-3.1-8B: 1.7× for LMCache+LP+AsyncKV)',
        target: paperBand(1.7, 1.7, POOLING_CAUSE),
      },
      {
        path: 'pooling.striped_vs_single_device',
        what:
          '128K of KV on SSD through passthrough, read from one drive ÷ striped ' +
          "over two by kv-core's placement (§III: the second SSD sits idle)",
        target: atLeast(1.8),
      },
      {
        path: 'pooling.ttft_128k_vs.lmcache',
        what: 'TTFT at 128K, LMCache-like file store ÷ the pool (paper, LLaMA-3.1-8B: 2.9×)',
        target: paperBand(2.9, 2.9, POOLING_CAUSE),
      },
      {
        path: 'pooling.ttft_128k_vs.lmcache-lp',
        what: 'TTFT at 128K, + layer-wise pipelining ÷ the pool (paper: 2.6×)',
        target: paperBand(2.6, 2.6, POOLING_CAUSE),
      },
      {
        path: 'pooling.blocked_io_128k_vs.lmcache',
        what: 'blocked I/O at 128K, LMCache-like file store ÷ the pool (paper, LLaMA-3.1-8B: 7.8×)',
        target: paperBand(7.8, 7.8, POOLING_CAUSE),
      },
      {
        path: 'pooling.ablation_128k_ttft_vs_full.orchestrator-only',
        what: 'TTFT at 128K, orchestrator only (striped, SSD through the filesystem) ÷ the full pool (paper Fig. 10: 1.8×)',
      },
      {
        path: 'pooling.ablation_128k_ttft_vs_full.passthrough-only',
        what: 'TTFT at 128K, passthrough only (one module, one SSD, no filesystem) ÷ the full pool (paper Fig. 10: 2.3×)',
      },
      { path: 'pooling.ttft_128k_s.pool', what: 'TTFT at 128K, the striped passthrough pool (s; paper, LLaMA-3.1-8B: 5.6 s)' },
      { path: 'pooling.ttft_128k_s.lmcache-lp-async', what: 'TTFT at 128K, the strongest file store (s)' },
      { path: 'pooling.blocked_io_128k_s.pool', what: 'blocked I/O at 128K, the pool (s; paper: 0.6 s)' },
      {
        path: 'pooling.ttft_128k_vs_file_store_with_paper_gpu_time',
        what: "the TTFT ratio with the paper's GPU time outside blocked I/O (5.0 s, LLaMA-3.1-8B pooling) added to both sides",
        label: 'sensitivity: the twin models only retrieval and the question prefill',
      },
      metInEveryCase('GPU FLOP/s, PCIe, DDR4 and NVMe bandwidth'),
      rangeOverCases('ttft_128k_vs_file_store', 'TTFT at 128K, the strongest file store ÷ the pool'),
      rangeOverCases('blocked_io_128k_vs_file_store', 'blocked I/O at 128K, the strongest file store ÷ the pool'),
      {
        path: 'robustness.filesystem_share.blocked_io_128k_vs_file_store_range',
        what:
          "the same blocked I/O ratio with §III-C's filesystem share (84%) at −20% and " +
          "+20% of itself (capped at 95%): the paper's measurement, not a hardware figure",
      },
      {
        path: 'pooling.ssd_file_over_host_read',
        what: 'a chunk read from SSD through the filesystem ÷ from one DDR4 module, per byte (paper §III-C: 11×)',
      },
    ],
  },
  'twin-swiftcache': {
    what:
      "SwiftCache's experiment on the twin (npm run twin -- swiftcache): an LWM-7B " +
      'master and Qwen3-14B + Qwen3-8B workers on modelled H20s (NVLink 200 ' +
      "GB/s each way, PCIe 4.0 shared by four GPUs); max context from kv-core's " +
      'elastic-cache coordinator (Algorithm 1, LCM units) and layer-stream ' +
      'plan (Eq. 1–5) against vLLM chunked prefill, P99 TTFT on histories over ' +
      '20K tokens with Poisson arrivals against vLLM + LMCache-style CPU ' +
      "offload (asynchronous, layer-wise), and the master's KV traffic's " +
      "share of the workers' HBM time (docs/twin-experiments.md §SwiftCache)",
    keys: [
      {
        path: 'swiftcache.max_context_vs_chunked8k',
        what:
          "the master's longest context at 96 GB, SwiftCache (Mnemo's two-plane stream over what idle " +
          'workers lend) ÷ vLLM chunked prefill 8K alone (paper Fig. 9: 1.58–3.98× over 96/80/32/24 GB)',
        target: paperBand(1.58, 3.98),
      },
      {
        path: 'swiftcache.ttft_p99_vs_offload',
        what:
          "P99 TTFT, PCIe CPU offload ÷ SwiftCache lending on the node-manager's " +
          'demand rule (kv-core SessionDemand: live requests plus the sessions served ' +
          "within the elastic window), lowest over the rates where offload's GPU " +
          'is under 80% busy (paper Fig. 7: −54% and −58%, i.e. 2.17× and 2.38×)',
        target: paperBand(2.17, 2.38),
      },
      {
        path: 'swiftcache.worker_interference',
        what:
          "the master's KV traffic's share of a worker's HBM time, worst over Fig. 8's " +
          'lengths back to back and the TTFT runs (paper Fig. 8: worker TTFT up to +9.7%)',
        target: atMost(0.1),
      },
      {
        path: 'swiftcache.ttft_p99_vs_offload_lend_idle',
        what: "the same P99 ratio with every idle worker unit lent (the paper's Algorithm 1, which looks at the worker's window only)",
      },
      {
        path: 'swiftcache.ttft_p99_vs_offload_live_only',
        what: "the same P99 ratio on the node-manager's earlier demand rule: live requests alone",
      },
      ...[96, 80, 32, 24].map((gb): HeadlineKey => ({
        path: `swiftcache.max_context_vs_chunked8k_by_gb.${gb}`,
        what: `max context ÷ vLLM chunked 8K at ${gb} GB (Mnemo's two-plane stream; paper Fig. 9: 1.58–3.98× over the four points)`,
      })),
      ...[96, 24].map((gb): HeadlineKey => ({
        path: `swiftcache.max_context_eq5_vs_chunked8k_by_gb.${gb}`,
        what: `the same at ${gb} GB with the paper's Eq. 1–5 (one resident layer)`,
      })),
      ...['15/min', '30/min', '60/min', '120/min'].map((rate): HeadlineKey => ({
        path: `swiftcache.ttft_p99_vs_offload_by_rate.${rate}`,
        what: `P99 TTFT, offload ÷ SwiftCache (live requests + recent sessions) at ${rate} arrivals`,
      })),
      {
        path: 'swiftcache.worker_nvlink_share',
        what: "the master's KV traffic's share of a worker's NVLink time, worst case (the link a worker's own serving does not use)",
      },
      metInEveryCase('H20 FLOP/s, HBM bandwidth, HBM size, NVLink, PCIe'),
      rangeOverCases('max_context_vs_chunked8k', 'max context ratio at 96 GB'),
      rangeOverCases('ttft_p99_vs_offload', 'P99 TTFT ratio (live requests + recent sessions)'),
      rangeOverCases('ttft_p99_vs_offload_lend_idle', 'P99 TTFT ratio (every idle unit lent)'),
      rangeOverCases('ttft_p99_vs_offload_live_only', 'P99 TTFT ratio (earlier live-only rule)'),
      rangeOverCases('worker_interference', 'worker HBM share'),
      ...[0, 1].map((i): HeadlineKey => ({
        path: `robustness.worker_live_tokens.rows.${i}.ttft_p99_vs_offload`,
        what:
          `P99 TTFT ratio (live requests + recent sessions) with each worker keeping ${i === 0 ? 'half' : 'twice'} ` +
          `its stated 64 × 2K tokens for its own chats (an assumption, not a hardware figure)`,
      })),
      ...[0, 1].map((i): HeadlineKey => ({
        path: `robustness.worker_live_tokens.rows.${i}.ttft_p99_vs_offload_lend_idle`,
        what: `the same with every idle unit lent, workers keeping ${i === 0 ? 'half' : 'twice'} as much`,
      })),
      {
        path: 'swiftcache.max_context_vs_chunked8k_qwen3_8b_master_by_gb.96',
        what: 'max context ÷ vLLM chunked 8K at 96 GB with a Qwen3-8B master (GQA) and the same workers',
      },
      { path: 'swiftcache.max_context_vs_chunked8k_qwen3_8b_master_by_gb.24', what: 'the same at 24 GB (two Qwen3-8B workers)' },
    ],
  },
  'twin-droidspeak': {
    what:
      "DroidSpeak's serving experiment on the twin (npm run twin -- droidspeak): " +
      'Llama-3.1-8B on a modelled A100, HotpotQA-like contexts (Table ' +
      '2) whose base-model KV and E cache come from another node over 25 GB/s HDR InfiniBand, uniform arrivals; full prefill, full reuse ' +
      "and kv-core's choosePlan on the profiles the reference engine measured " +
      'on the trained pairs (bench/results/droidspeak.json), 8-layer ' +
      "patterns mapped to 32 layers by fraction; SLO: P90 TTFT within 3× full prefill's unloaded TTFT (docs/twin.md §DroidSpeak at scale)",
    keys: [
      {
        path: 'droidspeak.throughput_vs_full_prefill_at_slo',
        what:
          "throughput at the TTFT SLO, Mnemo's plan choice (the node's load, the SLO as budget with each request's " +
          'wait charged) within a 1% quality floor ÷ full prefill, mean of the trained pairs (paper Fig. 15: 2–3×)',
        target: paperBand(
          2,
          3,
          "the reference engine's small trained pairs lose more than 1% top-1 agreement once more than a few layers are reused, " +
            'so the plan choice falls back to full prefill',
        ),
      },
      {
        path: 'droidspeak.quality_loss_at_slo',
        what: 'quality loss of the plans chosen at that rate (1 − top-1 agreement on the profiling split), request mean',
      },
      {
        path: 'droidspeak.best_kind_throughput_vs_full_prefill_at_slo',
        what:
          'the same throughput ratio (1% top-1 floor) for the best pair of the ' +
          'best pair kind (base → full FT, FT ↔ FT, base → LoRA, LoRA ↔ LoRA)',
        target: atLeast(2),
      },
      { path: 'droidspeak.by_kind.base_lora.throughput_vs_full_prefill_at_slo', what: 'base → LoRA pairs, mean, 1% top-1 floor' },
      {
        path: 'droidspeak.by_kind.base_lora.task_floor_throughput_vs_full_prefill_at_slo',
        what: 'base → LoRA pairs, mean, the floor held on task loss (1%)',
      },
      { path: 'droidspeak.test_loss_at_slo', what: 'the same on the held-out test split' },
      {
        path: 'droidspeak.recomputed_layers_at_slo',
        what: 'layers of 32 the chosen plans recompute, request mean (32: every request ran a full prefill)',
      },
      {
        path: 'droidspeak.cheapest_within_floor_throughput_vs_full_prefill_at_slo',
        what: 'the same throughput ratio with no latency budget (the cheapest plan within the 1% floor, the live default)',
      },
      ...[
        ['by_floor_cheapest', 'the cheapest plan'],
        ['by_floor', "Mnemo's plan choice"],
      ].flatMap(([rows, plan]): HeadlineKey[] => [
        {
          path: `droidspeak.${rows}.10pct.throughput_vs_full_prefill_at_slo`,
          what: `throughput ratio with ${plan} within a 10% floor`,
          label: LOOSER_FLOOR,
        },
        { path: `droidspeak.${rows}.10pct.quality_loss`, what: 'its quality loss on the profiling split', label: LOOSER_FLOOR },
      ]),
      {
        path: 'droidspeak.by_floor_fixed_budget.10pct.throughput_vs_full_prefill_at_slo',
        what: 'the same with the wait not charged against the budget (the estimate before)',
        label: 'comparison: the previous policy',
      },
      {
        path: 'droidspeak.smallest_floor_reaching_2x',
        what: 'the tightest quality floor tested (1%, 5%, 10%, 15%) at which the trained pairs reach 2×',
      },
      { path: 'droidspeak.full_reuse_throughput_vs_full_prefill_at_slo', what: "full reuse of the base model's KV ÷ full prefill" },
      { path: 'droidspeak.full_reuse_quality_loss', what: "full reuse's held-out quality loss" },
      {
        path: 'droidspeak.fetch_share_of_prefill_half_plan_max',
        what:
          "fetching the KV and E cache over InfiniBand ÷ the unloaded prefill, the trained frontiers' " +
          'plan closest to half the layers recomputed, largest over 1K–32K tokens (paper Fig. 16: ≤ 11%)',
        target: atMost(0.11),
      },
      {
        path: 'droidspeak.constructed_throughput_vs_full_prefill_at_slo',
        what: 'throughput ratio at the 1% floor on the planted pair mnemo-medium-ds35 (2 of 8 layers perturbed)',
        label: 'constructed pair: a test of the mechanism, not a finding',
      },
      metInEveryCase('GPU FLOP/s, GPU memory bandwidth, InfiniBand', 'the headline ratio at ≥ 2×', 'target_met_in_every_case'),
      rangeOverCases('throughput_vs_full_prefill_at_slo', 'the headline ratio'),
      rangeOverCases('fetch_share_of_prefill_half_plan_max', 'the fetch share of the half plan'),
      { path: 'experiment_wall_s', what: 'wall time of the whole command on this machine (s)' },
    ],
  },
  'twin-fastswitch': {
    what:
      "FastSwitch's experiment on the twin (npm run twin -- fastswitch): Llama-8B on a modelled A10 with 60 " +
      'GB of host swap space, ShareGPT-like conversations, preemptive priority scheduling under Markov and ' +
      'Random priority traces; vLLM-style per-block, per-layer swaps against block groups, adaptive async ' +
      'swap-in and host-copy reuse, all kv-core code, over the per-call copy dispatch (docs/twin-experiments.md)',
    keys: [
      {
        path: 'fastswitch.p99_ttft_ratio',
        what:
          "P99 TTFT, vLLM ÷ FastSwitch, at the paper's dispatch (§2.2's " +
          'lowest: 90 µs per call), Markov f = 0.04 (paper Fig. 8: 3.7–4.1×)',
        target: paperBand(
          3.7,
          4.1,
          "117 µs per copy call is a reading of Table 1, not a measurement: the twin's vLLM stalls for copies half the run " +
            'and its queue grows without bound',
        ),
      },
      {
        path: 'fastswitch.p999_tbt_ratio',
        what: 'P99.9 TBT, vLLM ÷ FastSwitch, the same (paper Fig. 8: 2.0–2.7×)',
        target: paperBand(2.0, 2.7, 'the same per-call dispatch reading of Table 1 stalls the baseline'),
      },
      {
        path: 'fastswitch.swap_out_reduction',
        what:
          "swap-out blocks host-copy reuse cut, 1 − FastSwitch's copied ÷ what the same swap-outs copy without reuse " +
          '(paper Table 1: 53%); fastswitch.swap_out_blocks_vs_vllm is 1 − FastSwitch ÷ vLLM over their two runs',
        target: paperBand(0.53, 0.53, "the twin's host copies stay valid longer than the paper's, which §3.3 says are contaminated"),
      },
      {
        path: 'fastswitch.switch_overhead_ratio',
        what: 'time iterations stood still for copies, vLLM ÷ FastSwitch (paper Fig. 10: block groups alone up to 3.11×)',
      },
      { path: 'fastswitch.groups_only_switch_overhead_ratio', what: 'the same, block groups alone (paper Fig. 10: 3.11×)' },
      { path: 'fastswitch.blocks_per_call', what: "FastSwitch's blocks per copy call (§3.1: about 20 blocks per block group)" },
      {
        path: 'fastswitch.measured_dispatch.p99_ttft_ratio',
        what: 'P99 TTFT, vLLM ÷ FastSwitch, at the per-call dispatch measured on the H200 (2.47 µs): our hardware, no paper band',
      },
      { path: 'fastswitch.measured_dispatch.p999_tbt_ratio', what: 'P99.9 TBT, the same at 2.47 µs' },
      {
        path: 'fastswitch.measured_dispatch.groups_only_switch_overhead_ratio',
        what: 'switching overhead, vLLM ÷ block groups alone at 2.47 µs: what grouping buys on H200-class dispatch',
      },
      metInEveryCase('GPU FLOP/s, memory bandwidth, KV capacity, PCIe bandwidth, per-call dispatch', 'the three targeted keys met'),
      rangeOverCases('p99_ttft_ratio', 'P99 TTFT ratio'),
      rangeOverCases('p999_tbt_ratio', 'P99.9 TBT ratio'),
      rangeOverCases('swap_out_reduction', 'swap-out reduction'),
    ],
  },
};
