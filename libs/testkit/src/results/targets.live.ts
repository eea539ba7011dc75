// Headline keys and targets of the live benchmarks (engine, serving, tiers, DroidSpeak): see targets.ts.
import { above, atLeast, atMost, equals, plantedPair, type BenchmarkTargets, type HeadlineKey } from './targets.types.js';

export const LIVE_TARGETS: Record<string, BenchmarkTargets> = {
  engine: {
    what: 'CPU kernels of the reference engine against what the machine can do (fractions paired with a peak burst measured beside them)',
    keys: [
      {
        path: 'summary.gemm_frac_of_peak',
        what: "GEMM at the largest model's prefill shapes, of the FMA-loop peak",
        target: atLeast(0.7),
      },
      { path: 'summary.prefill_frac_of_peak', what: 'prefill, of the FMA-loop peak', target: atLeast(0.5) },
      { path: 'summary.decode_b8_frac_of_membw', what: 'decode at batch 8, of the read bandwidth', target: atLeast(0.6) },
      { path: 'summary.event_loop_lag_p99_ms', what: 'event-loop lag p99 during a long prefill (ms)', target: atMost(10) },
      { path: 'summary.peak_gflops', what: 'the FMA-loop peak (GFLOP/s)' },
      { path: 'summary.mem_read_gbs', what: 'read bandwidth (GB/s)' },
    ],
  },
  'engine-cuda': {
    what:
      'The CUDA backend on a lent GPU (mnemo_cuda_check): every kernel-contract op against the CPU kernels, ' +
      'GEMM and paged attention against PyTorch on the same device, copies and swaps against the PCIe link',
    keys: [
      {
        path: 'ops_passed',
        what: 'kernel-contract ops passing on the device in bf16 and f16 (of ops_total)',
        target: atLeast(14),
      },
      {
        path: 'gemm_frac_of_torch',
        what: "GEMM at Llama-3.1-8B's compute-bound shapes (m >= 512), the engine's default path ÷ torch.matmul bf16",
        target: atLeast(0.7),
      },
      { path: 'gemm_frac_of_torch_by_path.tensor-core', what: 'the same, our own WMMA tensor-core kernel (used when cuBLAS is absent)' },
      {
        path: 'attention_frac_of_torch',
        what: 'paged attention ÷ scaled_dot_product_attention, decode and 512-row prefill chunks at 1K-32K context',
      },
      {
        path: 'h2d_frac_of_link',
        what: 'host → device in 2 MiB batched ranges, of one plain large cudaMemcpyAsync',
        target: atLeast(0.8),
      },
      { path: 'swap_group_vs_block_gbs', what: 'swap GB/s, block groups of 20 ÷ per-block per-layer copies (Llama-3.1-8B KV blocks)' },
      { path: 'swap_dispatch_us_per_call', what: 'per-call cost of a host ↔ device copy, fitted over sizes (µs)' },
      { path: 'overlap.overlap_frac', what: 'a 1 GiB copy hidden under compute on the two streams (fraction)' },
    ],
  },
  'engine-cuda-prefill': {
    what:
      "Long-context prefill on a lent GPU, PyTorch at Llama-3.1-8B's shapes: one layer's GEMMs and causal attention " +
      'at 4K-128K tokens per attention backend, and a 128-token question over a cached context (the twin prices both by its roofline)',
    keys: [
      {
        path: 'attention_eff',
        what: "causal attention over 8K-128K-token prompts, fastest backend, of the bf16 peak (the twin's H200 attnEff)",
      },
      { path: 'gemm_eff_long', what: "the layer's GEMMs over 8K-128K-token prompts, of the bf16 peak" },
      { path: 'prefill.5.model_prefill_s', what: 'a whole 128K-token prompt, all 32 layers, fastest backend (s)' },
      { path: 'prefill.5.attention_share', what: "attention's share of a layer's time at 128K tokens" },
      { path: 'question.2.model_prefill_ms', what: 'a 128-token question over a cached 128K context, all 32 layers (ms)' },
    ],
  },
  fastswitch: {
    what:
      "FastSwitch's priority scheduling with grouped, reused, overlapped swaps " +
      'against a vLLM-style per-block swap baseline, same trace, lockstep',
    keys: [
      { path: 'p99_ttft_baseline_over_fastswitch', what: 'P99 TTFT, baseline ÷ FastSwitch', target: atLeast(2) },
      {
        path: 'p999_tbt_baseline_over_fastswitch',
        what: 'P99.9 time between tokens, baseline ÷ FastSwitch',
        target: atLeast(2),
      },
      { path: 'swap_out_volume_reduction', what: 'swap-out bytes saved (fraction)', target: atLeast(0.4) },
      { path: 'mean_transfer_bytes_ratio', what: 'bytes per copy, FastSwitch ÷ baseline' },
      { path: 'throughput_fastswitch_over_baseline', what: 'throughput, FastSwitch ÷ baseline' },
      { path: 'async_swap_ins', what: 'asynchronous swap-ins FastSwitch ran (all rows)' },
    ],
  },
  multiround: {
    what:
      'Symphony routing and advisories on a multi-node cluster of real ' +
      'node-managers, against baseline routing policies on the same seeded workload',
    keys: [
      { path: 'symphony_vs_recompute_ttft_p99', what: 'TTFT p99, recompute ÷ symphony', target: atLeast(2) },
      {
        path: 'symphony_vs_sticky_ttft_p99',
        what: 'TTFT p99, sticky with the KV left on the device ÷ symphony',
        label: 'extra: sticky-device pays no swap (InferCept is the sticky headline)',
      },
      {
        path: 'symphony_vs_llmd_ttft_p99',
        what: 'TTFT p99, llm-d-like load-aware prefix scorer ÷ symphony',
        target: above(1),
      },
      {
        path: 'symphony_vs_conductor_ttft_p99',
        what: "TTFT p99, Mooncake Conductor's Algorithm 1 (queue + transfer + prefill) ÷ symphony",
        target: above(1),
      },
      {
        path: 'routing_check.never_behind',
        what: "symphony at least as good as llm-d's and conductor's at p50, mean and p99 in every pass (A-A spread; medians ≥ 1)",
        target: equals(true),
      },
      {
        path: 'symphony_vs_infercept_ttft_p99',
        what: 'TTFT p99, InferCept-like (offload to host between turns) ÷ symphony',
        target: above(1),
      },
      { path: 'symphony_vs_prefix_affinity_ttft_p99', what: 'TTFT p99, pure prefix affinity ÷ symphony', label: 'strawman: ignores load' },
      { path: 'missed10_degradation', what: "symphony's p99 with 10% of advisories missed, change", target: atMost(0.1) },
      { path: 'spurious60_degradation', what: "symphony's p99 with 60% spurious advisories, change", target: atMost(0.05) },
    ],
  },
  'multiround-engine': {
    what:
      'The multi-round benchmark on the reference engine (fortune-base on the CPU backend, 4 nodes on shared cores): a calibration ' +
      "run whose traced forward steps fit the twin's compute port, then the routers on another seed, for npm run twin -- validate --engine",
    keys: [
      { path: 'engine_fit.cost.prefillPerTokenMs', what: 'fitted prefill cost per computed token, at the run’s concurrency (ms)' },
      { path: 'engine_fit.cost.prefillPerKContextMs', what: 'fitted prefill attention, per computed token per 1,000 attended tokens (ms)' },
      { path: 'engine_fit.cost.decodeBaseMs', what: 'fitted decode step, fixed part (ms)' },
      { path: 'engine_fit.cost.decodePerSeqMs', what: 'fitted decode step, per sequence (ms)' },
      { path: 'engine_fit.prefill.median_abs_error', what: 'prefill steps: median |fit − measured| ÷ measured over the calibration run' },
      { path: 'engine_fit.decode.median_abs_error', what: 'decode steps: the same' },
      { path: 'engine_fit.prefill.total_error', what: 'prefill steps: Σ fit ÷ Σ measured − 1 (the run’s engine time priced whole)' },
      { path: 'policies.symphony.ttft_p50_ms', what: 'TTFT p50, symphony (ms, every validation pass pooled)' },
      { path: 'policies.symphony.ttft_p99_ms', what: 'TTFT p99, symphony (ms)' },
      {
        path: 'routing_check.never_behind',
        what: "symphony at least as good as llm-d's and conductor's at p50, mean and p99 in every pass, on a real model",
      },
    ],
  },
  multiturn: {
    what:
      "Mnemo's tiers (device prefix cache + host + SSD) on one node against " +
      'recompute and device-only prefix caching, multi-turn sessions',
    keys: [
      { path: 'ttft_p99_recompute_over_mnemo', what: 'TTFT p99, recompute ÷ Mnemo', target: atLeast(3) },
      {
        path: 'ttft_p99_apc_small_over_mnemo',
        what: "TTFT p99, vLLM-style prefix cache at Mnemo's device budget ÷ Mnemo",
        target: atLeast(2),
      },
      { path: 'ttft_p50_apc_small_over_mnemo', what: "TTFT p50, vLLM-style prefix cache at Mnemo's device budget ÷ Mnemo" },
      {
        path: 'ttft_p50_mnemo_over_device_only',
        what: 'TTFT p50, Mnemo ÷ prefix cache with the whole device',
        target: atMost(1.25),
      },
      { path: 'ttft_p50_recompute_over_mnemo', what: 'TTFT p50, recompute ÷ Mnemo' },
      { path: 'blocked_io_ms_p99', what: 'time a restore blocked compute, p99 (ms)' },
      { path: 'prefix_hit_rate', what: 'prompt tokens served from cache' },
    ],
  },
  swiftcache: {
    what: 'SwiftCache: one device budget shared by co-located models (lent units), the layer stream cache, and worker interference',
    keys: [
      {
        path: 'max_context_vs_master_alone',
        what:
          'max context, master memory + lent worker units ÷ the master alone with chunked prefill, ' +
          "activations charged, no host memory either side; the lowest over the paper's four GPU sizes",
        target: atLeast(1.58),
      },
      ...[96, 80, 32, 24].map((gb): HeadlineKey => ({
        path: `max_context_vs_master_alone_by_vram.${gb}gb`,
        what: `the same at the ${gb} GB memory ratios`,
      })),
      {
        path: 'max_context_ratio_engine',
        what: 'max context at engine level, lent units + stream ÷ whole or chunked prefill in the master region',
        label: 'previous method: budget split evenly, no activations charged',
      },
      {
        path: 'max_context_ratio',
        what: 'max context, layer stream on ÷ off (serving path)',
        label: 'constructed: layers ÷ window, with host memory',
      },
      {
        path: 'master_ttft_p99_offload_over_swiftcache',
        what: "master's TTFT p99, host offload ÷ lent units",
        target: above(1),
      },
      {
        path: 'worker_interference',
        what: "workers' TPOT p99 while the master uses their units, change",
        target: atMost(0.1),
      },
    ],
  },
  tiers: {
    what: 'The KV store tiers (host pool, SSD pool) against the machine limits, file-per-chunk storage and Redis',
    keys: [
      { path: 'host_get_frac_of_memcpy', what: 'host tier read, of memcpy (paired per round)', target: atLeast(0.85) },
      { path: 'host_put_frac_of_memcpy', what: 'host tier write, of memcpy (paired per round)', target: atLeast(0.7) },
      {
        path: 'ssd_get_frac_of_raw',
        what: 'SSD tier read, of raw O_DIRECT read (io_uring; paired per round)',
        target: atLeast(0.85),
      },
      {
        path: 'ssd_put_frac_of_raw',
        what: 'SSD tier write, of raw O_DIRECT write (io_uring; paired per round)',
        target: atLeast(0.7),
      },
      { path: 'ssd_get_vs_file_cold', what: 'SSD tier read ÷ a file per chunk, cold page cache', target: atLeast(2) },
      {
        path: 'striped_frac_of_sum',
        what: 'SSD tier get on two throttled devices striped by bandwidth, of the sum of the same get on each alone',
        target: atLeast(0.8),
      },
      { path: 'striped_over_fastest', what: 'the striped get ÷ the faster device alone' },
      { path: 'vs_redis_get', what: 'host tier read ÷ Redis (official client, pipelined; one server thread over loopback)' },
      { path: 'ssd_vs_redis_get', what: 'SSD tier read ÷ Redis' },
    ],
  },
  droidspeak: {
    what:
      "DroidSpeak cross-model KV reuse at engine level on pairs of the paper's four kinds (base → " +
      'full fine-tune, full fine-tune ↔ full fine-tune, base → LoRA, LoRA ↔ LoRA; tools/train): plan ' +
      "profiled on the profile split, measured on held-out in-domain text (each pair's context " +
      'length in pairs.<name>.profile.context; 2,048 by default), base KV and E cache in host memory',
    keys: [
      {
        path: 'best_kind_speedup_at_1pct_top1',
        what: "prefill speedup of the profiler's plan within 1% top-1 loss, the best pair kind (paper: 1.7–2.6× at ≤ 1% loss)",
        target: atLeast(1.7),
      },
      { path: 'best_kind_at_1pct_top1', what: 'the pair kind that reached it' },
      {
        path: 'best_kind_speedup_at_1pct_task',
        what:
          'the same with the floor held on task loss (relative increase of ' +
          "the derived model's held-out loss, the paper's kind of quality)",
      },
      { path: 'by_kind.base_full_ft.speedup_at_1pct_top1', what: 'base → full fine-tune, top-1 floor (best pair of the kind)' },
      { path: 'by_kind.full_ft_pair.speedup_at_1pct_top1', what: 'full fine-tune → full fine-tune of one base, top-1 floor' },
      { path: 'by_kind.base_lora.speedup_at_1pct_top1', what: 'base → LoRA, top-1 floor' },
      { path: 'by_kind.lora_pair.speedup_at_1pct_top1', what: 'LoRA → LoRA of one base, top-1 floor' },
      { path: 'by_kind.base_lora.speedup_at_1pct_task', what: 'base → LoRA, task-loss floor' },
      {
        path: 'prefill_speedup_at_1pct',
        what: "prefill speedup of the profiler's plan within 1% (the weaker trained pair; 1 = no plan, full prefill)",
        target: atLeast(1.7),
      },
      {
        path: 'quality_loss',
        what: "top-1 disagreement with the derived model's own prediction on the test split (the worse pair)",
        target: atMost(0.01),
      },
      { path: 'mean_kl', what: 'mean per-token KL(derived ‖ plan), nats (the worse pair)' },
      {
        path: 'best_speedup_within_1pct_on_test',
        what: 'fastest plan of the curve (best profiled plan per recomputed layers) within 1% on the test split (the weaker pair)',
      },
      {
        path: 'planted.prefill_speedup_at_1pct',
        what: 'prefill speedup of the chosen plan, mnemo-medium-ds35',
        label: plantedPair('a profiler test'),
      },
      {
        path: 'planted.quality_loss',
        what: 'top-1 disagreement, mnemo-medium-ds35',
        label: plantedPair('a profiler test'),
      },
      {
        path: 'planted.found_critical_layers',
        what: 'the chosen bands cover the planted layers',
        label: plantedPair('a profiler test'),
      },
    ],
  },
  'droidspeak-node': {
    what:
      "DroidSpeak on the node's path with the trained pairs: base KV and E cache fetched from the node's " +
      'KvStore tiers or a peer (gRPC), fetch inside the timed prefill, on held-out in-domain prompts',
    keys: [
      {
        path: 'prefill_speedup_at_1pct',
        what: "prefill speedup of the profiler's plan, base KV and E cache from the node's tiers (the weaker trained pair; 1 = no plan)",
        target: atLeast(1.7),
      },
      {
        path: 'quality_loss',
        what: 'top-1 disagreement of that plan on the test split (the worse pair)',
        target: atMost(0.01),
      },
      { path: 'mean_kl', what: 'mean per-token KL(derived ‖ plan), nats (the worse pair)' },
      {
        path: 'peer_prefill_speedup_at_1pct',
        what: 'the same plan with base KV and E cache pulled from a peer over ChunkTransfer gRPC (loopback, same cores)',
      },
      {
        path: 'best_speedup_within_1pct_on_test',
        what: 'fastest curve plan within 1% on the test split, on the node path (the weaker pair)',
      },
      {
        path: 'planted.prefill_speedup_at_1pct',
        what: 'prefill speedup from the tiers, mnemo-medium-ds35',
        label: plantedPair('a path test'),
      },
      {
        path: 'planted.peer_prefill_speedup_at_1pct',
        what: 'prefill speedup from a peer, mnemo-medium-ds35',
        label: plantedPair('a path test'),
      },
    ],
  },
  'droidspeak-e-cache': {
    what:
      'DroidSpeak E caches read back from the tiers (after a restart) and from a peer: ' +
      'trained pairs whose plan needs an E cache (none: null), and constructed pairs',
    keys: [
      {
        path: 'restart_speedup_with_e_cache',
        what: 'prefill speedup, E cache from the local tier after a restart (trained pairs with an E-cache plan)',
      },
      { path: 'peer_speedup_with_e_cache', what: 'prefill speedup, E cache from a peer (trained pairs with an E-cache plan)' },
      {
        path: 'planted.restart_speedup_with_e_cache',
        what: 'prefill speedup, E cache from the local tier after a restart, mnemo-medium-ds35',
        label: plantedPair('a path test'),
      },
      {
        path: 'planted.peer_speedup_with_e_cache',
        what: 'prefill speedup, E cache from a peer, mnemo-medium-ds35',
        label: plantedPair('a path test'),
      },
    ],
  },
  'peer-restore': {
    what: 'A session that moves to another node: its prefix pulled from the peer against recompute',
    keys: [
      { path: 'peer_vs_recompute_ttft_p50', what: 'TTFT p50, recompute ÷ peer restore' },
      { path: 'peer_vs_stayed_ttft_p50', what: 'TTFT p50, peer restore ÷ staying on the node' },
      { path: 'token_mismatches', what: 'tokens that differ from recompute', target: atMost(0) },
    ],
  },
};
