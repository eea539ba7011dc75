// The headline keys of each benchmark and the target each is held to: the one place targets
// live. `docs/results.md` shows these first, with the value from the results file and whether
// it meets the target; every other figure the file holds is listed after them.
//
// `path` is a dotted path into bench/results/<bench>.json. `target` is { op, value } with op one
// of '>=', '<=', '>', '<', or '=' (a flag that must hold a value: `value` is then a boolean). `label` marks a figure that is not a like-for-like headline (a
// constructed case, a separate method): it is shown, never counted as meeting a target.
//
// A twin headline that reproduces a paper's ratio has a two-sided target, { op: 'band', value: [lo, hi],
// paper: [plo, phi], cause? }: the paper's reported range widened ×/÷ 1.5 (`paperBand`). A figure
// outside it on either side is `disagrees_with_paper`, never met; `cause` is the traced reason shown
// when the figure is outside (an experiment may give a fresher one in its file's `disagreement_causes`).

/** The band a twin ratio is held to: the paper's range [lo, hi] (a single figure: lo = hi) widened ×/÷ 1.5. */
export function paperBand(lo, hi = lo, cause) {
  const r = (x) => Math.round(x * 1000) / 1000;
  return { op: 'band', value: [r(lo / 1.5), r(hi * 1.5)], paper: [lo, hi], ...(cause ? { cause } : {}) };
}

const POOLING_CAUSE =
  "the twin's TTFT holds no GPU time beside the question's prefill, so nothing hides the file stores' serialized retrieval; " +
  "the paper's ~5 s of GPU time (5.6 s TTFT, 0.6 s blocked I/O for the pool) hides most of it (baseline_check.v_b_*)";

/** The target registered for a headline key (the robustness rows hold their ±20% cases to the same one). */
export function targetOf(bench, path) {
  const t = BENCHMARKS[bench]?.keys.find((k) => k.path === path)?.target;
  if (!t) throw new Error(`no target registered for ${bench} ${path}`);
  return t;
}

/** @type {Record<string, { what: string, keys: Array<{ path: string, what: string, target?: { op: string, value: number | boolean | string }, label?: string }> }>} */
export const BENCHMARKS = {
  engine: {
    what: 'CPU kernels of the reference engine against what the machine can do (fractions paired with a peak burst measured beside them)',
    keys: [
      {
        path: 'summary.gemm_frac_of_peak',
        what: "GEMM at the largest model's prefill shapes, of the FMA-loop peak",
        target: { op: '>=', value: 0.7 },
      },
      { path: 'summary.prefill_frac_of_peak', what: 'prefill, of the FMA-loop peak', target: { op: '>=', value: 0.5 } },
      { path: 'summary.decode_b8_frac_of_membw', what: 'decode at batch 8, of the read bandwidth', target: { op: '>=', value: 0.6 } },
      { path: 'summary.event_loop_lag_p99_ms', what: 'event-loop lag p99 during a long prefill (ms)', target: { op: '<=', value: 10 } },
      { path: 'summary.peak_gflops', what: 'the FMA-loop peak (GFLOP/s)' },
      { path: 'summary.mem_read_gbs', what: 'read bandwidth (GB/s)' },
    ],
  },
  'engine-cuda': {
    what: 'The CUDA backend on a lent GPU (mnemo_cuda_check): every kernel-contract op against the CPU kernels, GEMM and paged attention against PyTorch on the same device, copies and swaps against the PCIe link',
    keys: [
      {
        path: 'ops_passed',
        what: 'kernel-contract ops passing on the device in bf16 and f16 (of ops_total)',
        target: { op: '>=', value: 14 },
      },
      {
        path: 'gemm_frac_of_torch',
        what: "GEMM at Llama-3.1-8B's compute-bound shapes (m >= 512), the engine's default path ÷ torch.matmul bf16",
        target: { op: '>=', value: 0.7 },
      },
      { path: 'gemm_frac_of_torch_by_path.tensor-core', what: 'the same, our own WMMA tensor-core kernel (used when cuBLAS is absent)' },
      {
        path: 'attention_frac_of_torch',
        what: 'paged attention ÷ scaled_dot_product_attention, decode and 512-row prefill chunks at 1K-32K context',
      },
      {
        path: 'h2d_frac_of_link',
        what: 'host → device in 2 MiB batched ranges, of one plain large cudaMemcpyAsync',
        target: { op: '>=', value: 0.8 },
      },
      { path: 'swap_group_vs_block_gbs', what: 'swap GB/s, block groups of 20 ÷ per-block per-layer copies (Llama-3.1-8B KV blocks)' },
      { path: 'swap_dispatch_us_per_call', what: 'per-call cost of a host ↔ device copy, fitted over sizes (µs)' },
      { path: 'overlap.overlap_frac', what: 'a 1 GiB copy hidden under compute on the two streams (fraction)' },
    ],
  },
  fastswitch: {
    what: "FastSwitch's priority scheduling with grouped, reused, overlapped swaps against a vLLM-style per-block swap baseline, same trace, lockstep",
    keys: [
      { path: 'p99_ttft_baseline_over_fastswitch', what: 'P99 TTFT, baseline ÷ FastSwitch', target: { op: '>=', value: 2 } },
      {
        path: 'p999_tbt_baseline_over_fastswitch',
        what: 'P99.9 time between tokens, baseline ÷ FastSwitch',
        target: { op: '>=', value: 2 },
      },
      { path: 'swap_out_volume_reduction', what: 'swap-out bytes saved (fraction)', target: { op: '>=', value: 0.4 } },
      { path: 'mean_transfer_bytes_ratio', what: 'bytes per copy, FastSwitch ÷ baseline' },
      { path: 'throughput_fastswitch_over_baseline', what: 'throughput, FastSwitch ÷ baseline' },
      { path: 'async_swap_ins', what: 'asynchronous swap-ins FastSwitch ran (all rows)' },
    ],
  },
  multiround: {
    what: 'Symphony routing and advisories on a multi-node cluster of real node-managers, against baseline routing policies on the same seeded workload',
    keys: [
      { path: 'symphony_vs_recompute_ttft_p99', what: 'TTFT p99, recompute ÷ symphony', target: { op: '>=', value: 2 } },
      {
        path: 'symphony_vs_sticky_ttft_p99',
        what: 'TTFT p99, sticky with the KV left on the device ÷ symphony',
        label: 'extra: sticky-device pays no swap (InferCept is the sticky headline)',
      },
      {
        path: 'symphony_vs_llmd_ttft_p99',
        what: 'TTFT p99, llm-d-like load-aware prefix scorer ÷ symphony',
        target: { op: '>', value: 1 },
      },
      {
        path: 'symphony_vs_infercept_ttft_p99',
        what: 'TTFT p99, InferCept-like (offload to host between turns) ÷ symphony',
        target: { op: '>', value: 1 },
      },
      { path: 'symphony_vs_prefix_affinity_ttft_p99', what: 'TTFT p99, pure prefix affinity ÷ symphony', label: 'strawman: ignores load' },
      { path: 'missed10_degradation', what: "symphony's p99 with 10% of advisories missed, change", target: { op: '<=', value: 0.1 } },
      { path: 'spurious60_degradation', what: "symphony's p99 with 60% spurious advisories, change", target: { op: '<=', value: 0.05 } },
    ],
  },
  multiturn: {
    what: "Mnemo's tiers (device prefix cache + host + SSD) on one node against recompute and device-only prefix caching, multi-turn sessions",
    keys: [
      { path: 'ttft_p99_recompute_over_mnemo', what: 'TTFT p99, recompute ÷ Mnemo', target: { op: '>=', value: 3 } },
      {
        path: 'ttft_p99_apc_small_over_mnemo',
        what: "TTFT p99, vLLM-style prefix cache at Mnemo's device budget ÷ Mnemo",
        target: { op: '>=', value: 2 },
      },
      { path: 'ttft_p50_apc_small_over_mnemo', what: "TTFT p50, vLLM-style prefix cache at Mnemo's device budget ÷ Mnemo" },
      {
        path: 'ttft_p50_mnemo_over_device_only',
        what: 'TTFT p50, Mnemo ÷ prefix cache with the whole device',
        target: { op: '<=', value: 1.25 },
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
        what: "max context, master memory + lent worker units ÷ the master alone with chunked prefill, activations charged, no host memory either side; the lowest over the paper's four GPU sizes",
        target: { op: '>=', value: 1.58 },
      },
      { path: 'max_context_vs_master_alone_by_vram.96gb', what: 'the same at the 96 GB memory ratios' },
      { path: 'max_context_vs_master_alone_by_vram.80gb', what: 'the same at the 80 GB memory ratios' },
      { path: 'max_context_vs_master_alone_by_vram.32gb', what: 'the same at the 32 GB memory ratios' },
      { path: 'max_context_vs_master_alone_by_vram.24gb', what: 'the same at the 24 GB memory ratios' },
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
        target: { op: '>', value: 1 },
      },
      {
        path: 'worker_interference',
        what: "workers' TPOT p99 while the master uses their units, change",
        target: { op: '<=', value: 0.1 },
      },
    ],
  },
  tiers: {
    what: 'The KV store tiers (host pool, SSD pool) against the machine limits, file-per-chunk storage and Redis',
    keys: [
      { path: 'host_get_frac_of_memcpy', what: 'host tier read, of memcpy (paired per round)', target: { op: '>=', value: 0.85 } },
      { path: 'host_put_frac_of_memcpy', what: 'host tier write, of memcpy (paired per round)', target: { op: '>=', value: 0.7 } },
      {
        path: 'ssd_get_frac_of_raw',
        what: 'SSD tier read, of raw O_DIRECT read (io_uring; paired per round)',
        target: { op: '>=', value: 0.85 },
      },
      {
        path: 'ssd_put_frac_of_raw',
        what: 'SSD tier write, of raw O_DIRECT write (io_uring; paired per round)',
        target: { op: '>=', value: 0.7 },
      },
      { path: 'ssd_get_vs_file_cold', what: 'SSD tier read ÷ a file per chunk, cold page cache', target: { op: '>=', value: 2 } },
      {
        path: 'striped_frac_of_sum',
        what: 'SSD tier get on two throttled devices striped by bandwidth, of the sum of the same get on each alone',
        target: { op: '>=', value: 0.8 },
      },
      { path: 'striped_over_fastest', what: 'the striped get ÷ the faster device alone' },
      { path: 'vs_redis_get', what: 'host tier read ÷ Redis (official client, pipelined; one server thread over loopback)' },
      { path: 'ssd_vs_redis_get', what: 'SSD tier read ÷ Redis' },
    ],
  },
  droidspeak: {
    what: "DroidSpeak cross-model KV reuse at engine level on pairs of the paper's four kinds (base → full fine-tune, full fine-tune ↔ full fine-tune, base → LoRA, LoRA ↔ LoRA; tools/train): plan profiled on the profile split, measured on held-out in-domain text (each pair's context length in pairs.<name>.profile.context; 2,048 by default), base KV and E cache in host memory",
    keys: [
      {
        path: 'best_kind_speedup_at_1pct_top1',
        what: "prefill speedup of the profiler's plan within 1% top-1 loss, the best pair kind (paper: 1.7–2.6× at ≤ 1% loss)",
        target: { op: '>=', value: 1.7 },
      },
      { path: 'best_kind_at_1pct_top1', what: 'the pair kind that reached it' },
      {
        path: 'best_kind_speedup_at_1pct_task',
        what: "the same with the floor held on task loss (relative increase of the derived model's held-out loss, the paper's kind of quality)",
      },
      { path: 'by_kind.base_full_ft.speedup_at_1pct_top1', what: 'base → full fine-tune, top-1 floor (best pair of the kind)' },
      { path: 'by_kind.full_ft_pair.speedup_at_1pct_top1', what: 'full fine-tune → full fine-tune of one base, top-1 floor' },
      { path: 'by_kind.base_lora.speedup_at_1pct_top1', what: 'base → LoRA, top-1 floor' },
      { path: 'by_kind.lora_pair.speedup_at_1pct_top1', what: 'LoRA → LoRA of one base, top-1 floor' },
      { path: 'by_kind.base_lora.speedup_at_1pct_task', what: 'base → LoRA, task-loss floor' },
      {
        path: 'prefill_speedup_at_1pct',
        what: "prefill speedup of the profiler's plan within 1% (the weaker trained pair; 1 = no plan, full prefill)",
        target: { op: '>=', value: 1.7 },
      },
      {
        path: 'quality_loss',
        what: "top-1 disagreement with the derived model's own prediction on the test split (the worse pair)",
        target: { op: '<=', value: 0.01 },
      },
      { path: 'mean_kl', what: 'mean per-token KL(derived ‖ plan), nats (the worse pair)' },
      {
        path: 'best_speedup_within_1pct_on_test',
        what: 'fastest plan of the curve (best profiled plan per recomputed layers) within 1% on the test split (the weaker pair)',
      },
      {
        path: 'planted.prefill_speedup_at_1pct',
        what: 'prefill speedup of the chosen plan, mnemo-medium-ds35',
        label: 'constructed pair (planted critical layers): a profiler test',
      },
      {
        path: 'planted.quality_loss',
        what: 'top-1 disagreement, mnemo-medium-ds35',
        label: 'constructed pair (planted critical layers): a profiler test',
      },
      {
        path: 'planted.found_critical_layers',
        what: 'the chosen bands cover the planted layers',
        label: 'constructed pair (planted critical layers): a profiler test',
      },
    ],
  },
  'droidspeak-node': {
    what: "DroidSpeak on the node's path with the trained pairs: base KV and E cache fetched from the node's KvStore tiers or a peer (gRPC), fetch inside the timed prefill, on held-out in-domain prompts",
    keys: [
      {
        path: 'prefill_speedup_at_1pct',
        what: "prefill speedup of the profiler's plan, base KV and E cache from the node's tiers (the weaker trained pair; 1 = no plan)",
        target: { op: '>=', value: 1.7 },
      },
      {
        path: 'quality_loss',
        what: 'top-1 disagreement of that plan on the test split (the worse pair)',
        target: { op: '<=', value: 0.01 },
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
        label: 'constructed pair (planted critical layers): a path test',
      },
      {
        path: 'planted.peer_prefill_speedup_at_1pct',
        what: 'prefill speedup from a peer, mnemo-medium-ds35',
        label: 'constructed pair (planted critical layers): a path test',
      },
    ],
  },
  'droidspeak-e-cache': {
    what: 'DroidSpeak E caches read back from the tiers (after a restart) and from a peer: trained pairs whose plan needs an E cache (none: null), and constructed pairs',
    keys: [
      {
        path: 'restart_speedup_with_e_cache',
        what: 'prefill speedup, E cache from the local tier after a restart (trained pairs with an E-cache plan)',
      },
      { path: 'peer_speedup_with_e_cache', what: 'prefill speedup, E cache from a peer (trained pairs with an E-cache plan)' },
      {
        path: 'planted.restart_speedup_with_e_cache',
        what: 'prefill speedup, E cache from the local tier after a restart, mnemo-medium-ds35',
        label: 'constructed pair (planted critical layers): a path test',
      },
      {
        path: 'planted.peer_speedup_with_e_cache',
        what: 'prefill speedup, E cache from a peer, mnemo-medium-ds35',
        label: 'constructed pair (planted critical layers): a path test',
      },
    ],
  },
  'peer-restore': {
    what: 'A session that moves to another node: its prefix pulled from the peer against recompute',
    keys: [
      { path: 'peer_vs_recompute_ttft_p50', what: 'TTFT p50, recompute ÷ peer restore' },
      { path: 'peer_vs_stayed_ttft_p50', what: 'TTFT p50, peer restore ÷ staying on the node' },
      { path: 'token_mismatches', what: 'tokens that differ from recompute', target: { op: '<=', value: 0 } },
    ],
  },
  'twin-validate': {
    what: "The twin (libs/twin, docs/twin.md): the multi-round benchmark's workload and cluster in virtual time over kv-core's policies, costs from this machine's calibration, against the live run's per-pass TTFTs; and one simulated hour of 1,024 users on 8 instances",
    keys: [
      {
        path: 'validation.ttft_p50_error_max',
        what: 'TTFT p50, the twin against the mean of the live passes (absolute difference ÷ that mean), the largest over every configuration',
        target: { op: '<=', value: 0.15 },
      },
      { path: 'validation.ttft_p50_error.symphony', what: 'TTFT p50 error, symphony' },
      { path: 'validation.ttft_p50_error.llmd', what: 'TTFT p50 error, llmd' },
      { path: 'validation.ttft_p50_error.infercept', what: 'TTFT p50 error, infercept' },
      { path: 'validation.ttft_p50_error.recompute', what: 'TTFT p50 error, recompute' },
      { path: 'validation.ttft_p99_error.symphony', what: 'TTFT p99 error, symphony' },
      { path: 'validation.ttft_p99_twin_ms.symphony', what: 'TTFT p99 in the twin, symphony (ms, median of seeds)' },
      { path: 'validation.ttft_p99_live_range_ms.symphony', what: 'TTFT p99 of the live passes, symphony: lowest, highest (ms)' },
      { path: 'validation.ttft_p99_error.llmd', what: 'TTFT p99 error, llmd' },
      { path: 'validation.ttft_p99_twin_ms.llmd', what: 'TTFT p99 in the twin, llmd (ms, median of seeds)' },
      { path: 'validation.ttft_p99_live_range_ms.llmd', what: 'TTFT p99 of the live passes, llmd: lowest, highest (ms)' },
      { path: 'validation.ttft_p99_error.infercept', what: 'TTFT p99 error, infercept' },
      { path: 'validation.ttft_p99_twin_ms.infercept', what: 'TTFT p99 in the twin, infercept (ms, median of seeds)' },
      { path: 'validation.ttft_p99_live_range_ms.infercept', what: 'TTFT p99 of the live passes, infercept: lowest, highest (ms)' },
      { path: 'validation.ttft_p99_error.recompute', what: 'TTFT p99 error, recompute' },
      { path: 'validation.ttft_p99_twin_ms.recompute', what: 'TTFT p99 in the twin, recompute (ms, median of seeds)' },
      { path: 'validation.ttft_p99_live_range_ms.recompute', what: 'TTFT p99 of the live passes, recompute: lowest, highest (ms)' },
      {
        path: 'validation.ttft_p50_error_uncontended.symphony',
        what: 'TTFT p50 error, symphony, against only the live passes whose TPOT was within 1.1× the twin’s (nodes at the modelled speed; none: —)',
      },
      {
        path: 'validation.ttft_p50_error_uncontended.llmd',
        what: 'TTFT p50 error, llmd, against only the live passes whose TPOT was within 1.1× the twin’s (nodes at the modelled speed; none: —)',
      },
      {
        path: 'validation.ttft_p50_error_uncontended.infercept',
        what: 'TTFT p50 error, infercept, against only the live passes whose TPOT was within 1.1× the twin’s (nodes at the modelled speed; none: —)',
      },
      {
        path: 'validation.ttft_p50_error_uncontended.recompute',
        what: 'TTFT p50 error, recompute, against only the live passes whose TPOT was within 1.1× the twin’s (nodes at the modelled speed; none: —)',
      },
      {
        path: 'validation.policy_order_matches',
        what: 'the twin orders the headline systems by p50 and by p99 as the live run does',
        target: { op: '=', value: true },
      },
      { path: 'validation.policy_order_p50_matches', what: 'the same, by p50 alone' },
      {
        path: 'validation.policy_order_matches_where_live_separates',
        what: 'the same, over the pairs whose live per-pass ranges do not overlap (pairs the live run did not tell apart left out; validation.order_disagreements lists each)',
      },
      {
        path: 'scale.sim_hour_1024_users_s',
        what: 'wall time of one simulated hour of 1,024 users on 8 instances (s)',
        target: { op: '<=', value: 600 },
      },
      { path: 'scale.cpu_s', what: 'CPU time the twin spent in that run (s): the rest of the wall time it waited for a core' },
      { path: 'scale.events_per_wall_s', what: 'twin events per wall-clock second in that run' },
    ],
  },
  'twin-calibration': {
    what: "The twin's measured costs (npm run twin -- calibrate): service overheads and links, each from a microbenchmark on this machine, never fitted to an end-to-end TTFT",
    keys: [
      { path: 'overheads.schedule_ms', what: 'scheduler CPU per request (ms)' },
      { path: 'overheads.prefill_cpu_ms', what: 'node batch-loop CPU per prefill iteration, outside the engine (ms)' },
      { path: 'overheads.decode_cpu_ms', what: 'node batch-loop CPU per decode iteration, outside the engine (ms)' },
      {
        path: 'overheads.request_path_p50_ms',
        what: "a request's path outside the node (client, NATS hops, scheduler, dispatch, the first token event back), timed whole on an idle cluster with nothing to compute, median (ms; the twin draws it per request from the samples)",
      },
      {
        path: 'overheads.node_prefill_path_ms',
        what: "the node's own time for a prefill with nothing to compute, timed whole on an idle cluster: base (ms; the twin charges this in place of the batch loop's CPU)",
      },
      { path: 'overheads.node_prefill_path_ms_per_ktoken', what: 'the same, per 1,000 prompt tokens (ms)' },
      { path: 'overheads.node_decode_path_ms', what: "the node's own time per decode step of one sequence with nothing to compute (ms)" },
      { path: 'links.peer.dispatch_ms', what: 'peer layer stream, per call (ms)' },
      { path: 'links.host_load.dispatch_ms', what: 'host-pool layer load, per call (ms)' },
    ],
  },
  chaos: {
    what: 'Chaos run on loopback, reference engine: nodes killed and restarted, NATS restarted, SSD extents of chunks a later turn restores corrupted and the node holding them paused while others pull from it, under a seeded chat workload; a fault ledger matched against the counters; completed requests re-run on a clean cluster',
    keys: [
      { path: 'lost', what: 'requests with no answer at all', target: { op: '<=', value: 0 } },
      { path: 'mismatched_tokens', what: 'tokens differing from the clean re-run', target: { op: '=', value: 0 } },
      { path: 'duplicated_tokens', what: 'tokens a client saw twice', target: { op: '<=', value: 0 } },
      {
        path: 'failover_gap_ms_p99',
        what: 'largest gap between two tokens of a stream in flight during a fault (continued ones among them), p99 (ms)',
        target: { op: '<=', value: 3000 },
      },
      { path: 'gateway_failovers.by_outcome.continued', what: 'streams the gateway continued on another node' },
      {
        path: 'rss_growth_frac_max',
        what: 'RSS growth after warm-up, worst process incarnation (fraction, KV pool excluded)',
        target: { op: '<=', value: 0.2 },
      },
      { path: 'recovered_after_nats_restart_s', what: 'seconds from the NATS kill until a new request is served (3 s down)' },
      { path: 'completed', what: 'requests completed' },
      { path: 'failed_clean', what: 'requests that failed with a clear error (each listed in `failures` with its fault)' },
      {
        path: 'failed_unexplained',
        what: 'failed requests no fault of the run explains (each other one has `why_no_recovery`)',
        target: { op: '=', value: 0 },
      },
      { path: 'options.engine', what: 'engine the nodes ran (real tokens: reference)', target: { op: '=', value: 'reference' } },
      { path: 'mismatched_requests', what: 'requests whose text differs from the clean re-run', target: { op: '=', value: 0 } },
      {
        path: 'faults.corruptions_read',
        what: "corrupted chunks later read: dropped as corrupt in the targeted node's drop log (behind why)",
        target: { op: '>=', value: 1 },
      },
      {
        path: 'fault_counters.crc_failures',
        what: 'CRC32C failures the nodes counted (must be ≥ faults.corruptions_read: every read corruption caught)',
        target: { op: '>=', value: 1 },
      },
      {
        path: 'faults.detections_answered_correctly',
        what: 'corrupt reads after which every request holding the chunk on that node answered as the clean run did',
        target: { op: '>=', value: 1 },
      },
      {
        path: 'faults.peer_pauses_past_deadline',
        what: 'pauses of a node while another pulled from it, past the pull deadline',
        target: { op: '>=', value: 1 },
      },
      {
        path: 'fault_counters.peer_deadlines',
        what: 'peer pulls given up at their deadline (hung peer detected)',
        target: { op: '>=', value: 1 },
      },
      { path: 'faults.ledger_unmatched', what: 'ledger entries whose expected detection did not happen', target: { op: '=', value: 0 } },
    ],
  },
  'twin-symphony': {
    what: "Symphony's experiment on the discrete-event twin at the paper's scale (8 × Llama-3.1-8B on modelled A100s, closed-loop users on ShareGPT-like sessions): kv-core's symphony policy against vLLM-style recompute, InferCept-style sticky offload and llm-d-style scoring, costs from the hardware tables (docs/twin-experiments.md)",
    keys: [
      {
        path: 'symphony.ttft_vs_vllm',
        what: 'mean TTFT, vLLM as the paper ran it (no prefix cache) ÷ symphony, largest over the user sweep (paper: up to 2.4×)',
        target: paperBand(2.4),
      },
      {
        path: 'symphony.tpot_vs_vllm',
        what: 'mean TPOT, vLLM as the paper ran it ÷ symphony, largest over the sweep (paper: 1.4–1.9×)',
        target: paperBand(1.4, 1.9),
      },
      {
        path: 'symphony.users_vs_vllm_at_slo',
        what: 'users served within the TPOT SLO, symphony ÷ vLLM as the paper ran it (paper: 4×; a lower bound when symphony meets the SLO at the top of the sweep)',
        target: paperBand(4),
      },
      {
        path: 'symphony.ttft_vs_infercept',
        what: 'mean TTFT, InferCept-style sticky offload ÷ symphony, at 512 users, the largest count every system ran (paper: up to 2.4×)',
        target: paperBand(2.4),
      },
      {
        path: 'symphony.ttft_vs_llmd',
        what: 'mean TTFT, llm-d-style load-aware prefix scorer ÷ symphony, at 512 users',
        target: { op: '>', value: 1 },
      },
      {
        path: 'symphony.infercept_imbalance_256',
        what: 'InferCept-style users held per instance (distinct sessions served in the measured window), max ÷ median at 256 users (paper Fig. 15: 3.1×)',
        target: paperBand(3.1),
      },
      {
        path: 'symphony.missed10_degradation',
        what: "symphony's mean TPOT with 10% of advisories missed, change (paper Fig. 19: +3.1 ms)",
        target: { op: '<=', value: 0.1 },
      },
      {
        path: 'symphony.spurious60_degradation',
        what: "symphony's mean TPOT with 60% spurious advisories, change (paper Fig. 20: 2.1%)",
        target: { op: '<=', value: 0.05 },
      },
      {
        path: 'robustness.symphony_ahead_in_every_case',
        what: 'symphony ahead of vLLM as the paper ran it (no prefix cache) in mean TTFT and TPOT with each hardware figure (GPU FLOP/s, GPU memory bandwidth, PCIe, network) at −20% and +20%, at 256 users',
        target: { op: '=', value: true },
      },
      {
        path: 'robustness.in_paper_bands_in_every_case',
        what: "the TTFT and TPOT ratios at 256 users inside the headlines' paper bands in every one of those cases",
      },
      { path: 'robustness.ttft_vs_vllm_range', what: 'mean TTFT, vLLM-as-paper ÷ symphony, lowest and highest over those cases' },
      { path: 'robustness.tpot_vs_vllm_range', what: 'mean TPOT, vLLM-as-paper ÷ symphony, lowest and highest over those cases' },
      {
        path: 'symphony.vs_best_vllm.ttft_vs_vllm',
        what: "mean TTFT, vLLM at its best (its prefix cache on) ÷ symphony, largest over the sweep: Mnemo's own claim, no paper band",
      },
      { path: 'symphony.vs_best_vllm.tpot_vs_vllm', what: 'mean TPOT, the same' },
      { path: 'symphony.vs_best_vllm.users_vs_vllm_at_slo', what: 'users within the TPOT SLO, symphony ÷ vLLM at its best' },
    ],
  },
  'twin-plan': {
    what: "Capacity plan on the twin (npm run twin -- plan; the README's example): for N closed-loop users of Symphony's experiment, the cheapest instances, host GB and SSD TB per node at which each serving system meets a P99 TTFT and a mean TPOT SLO, by a bounded search of short twin runs; cost from labelled list prices (docs/twin.md, Capacity planning)",
    keys: [
      ...['symphony', 'recompute', 'infercept', 'llmd'].flatMap((p) => [
        {
          path: `plans.${p}.best.instances`,
          what: `${p}: fewest instances (GPUs) at which the whole cluster (every instance and user) meets the SLO, at the cells' memory point (none: cannot meet it)`,
        },
        { path: `plans.${p}.best.cost_usd_per_hour`, what: `${p}: that configuration's cost, $/hour` },
        { path: `plans.${p}.best.ttft_p99_ms`, what: `${p}: the whole cluster's P99 TTFT there, ms` },
        {
          path: `plans.${p}.slice_estimate.instances`,
          what: `${p}: the cells' estimate of the fewest instances, before the whole-cluster runs`,
        },
        {
          path: `plans.${p}.ttft_floor_ms`,
          what: `${p}: P99 TTFT floor, ms: the lowest over the plan's runs of each run's P99 of its measured requests' prefill of what they found uncached, on an idle GPU (a true lower bound: no run it made goes under it)`,
        },
      ]),
      { path: 'search.twin_runs', what: 'cell runs the search made, all policies' },
      { path: 'search.whole_cluster_runs', what: 'whole-cluster runs verifying and stepping up the answers, all policies' },
      {
        path: 'process_wall_s',
        what: 'wall seconds of the whole command on this machine (2 shared cores)',
        target: { op: '<=', value: 300 },
      },
    ],
  },
  'twin-plan-h100-512': {
    what: "twin plan asked as a new user would (not the README's example): 512 users of Symphony's experiment on Llama-3.1-8B and H100s within a 500 ms P99 TTFT, each policy answered with a verified size or with the whole-cluster runs that show it cannot meet (npm run twin -- plan --users 512 --model llama-3.1-8b --gpu H100 --slo-ttft-ms 500 --out bench/results/twin-plan-h100-512.json)",
    keys: ['symphony', 'recompute', 'infercept', 'llmd'].flatMap((p) => [
      { path: `plans.${p}.best.instances`, what: `${p}: fewest instances at which the whole cluster meets the SLO (none: cannot meet)` },
      { path: `plans.${p}.best.ttft_p99_ms`, what: `${p}: the whole cluster's P99 TTFT there, ms` },
      { path: `plans.${p}.ttft_floor_ms`, what: `${p}: the lowest of its runs' own lower bounds on P99 TTFT, ms` },
      { path: `plans.${p}.reason`, what: `${p}: why it cannot meet, from whole-cluster runs` },
    ]),
  },
  'twin-pooling': {
    what: "Unified KV pooling's experiment on the twin (npm run twin -- pooling): one Long Doc QA request at a time, 1K–128K tokens, Llama-3.1-8B on a modelled H100 with two DDR4 modules and two NVMe drives; LMCache-like file-per-chunk stores (+ layer-wise pipelining, + async loading) against Mnemo's striped passthrough pool with kv-core's Eq. 1–2 placement; costs from the hardware tables and the paper's §III (docs/twin-experiments.md)",
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
        what: "128K of KV on SSD through passthrough, read from one drive ÷ striped over two by kv-core's placement (§III: the second SSD sits idle)",
        target: { op: '>=', value: 1.8 },
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
      {
        path: 'robustness.targets_met_in_every_case',
        what: 'the three headline keys at their targets with each hardware figure (GPU FLOP/s, PCIe, DDR4 and NVMe bandwidth) at −20% and +20%',
        target: { op: '=', value: true },
      },
      {
        path: 'robustness.ttft_128k_vs_file_store_range',
        what: 'TTFT at 128K, the strongest file store ÷ the pool, lowest and highest over those cases',
      },
      {
        path: 'robustness.blocked_io_128k_vs_file_store_range',
        what: 'blocked I/O at 128K, the strongest file store ÷ the pool, lowest and highest over those cases',
      },
      {
        path: 'robustness.filesystem_share.blocked_io_128k_vs_file_store_range',
        what: "the same blocked I/O ratio with §III-C's filesystem share (84%) at −20% and +20% of itself (capped at 95%): the paper's measurement, not a hardware figure",
      },
      {
        path: 'pooling.ssd_file_over_host_read',
        what: 'a chunk read from SSD through the filesystem ÷ from one DDR4 module, per byte (paper §III-C: 11×)',
      },
    ],
  },
  'twin-swiftcache': {
    what: "SwiftCache's experiment on the twin (npm run twin -- swiftcache): an LWM-7B master and Qwen3-14B + Qwen3-8B workers on modelled H20s (NVLink 200 GB/s each way, PCIe 4.0 shared by four GPUs); max context from kv-core's elastic-cache coordinator (Algorithm 1, LCM units) and layer-stream plan (Eq. 1–5) against vLLM chunked prefill, P99 TTFT on histories over 20K tokens with Poisson arrivals against vLLM + LMCache-style CPU offload (asynchronous, layer-wise), and the master's KV traffic's share of the workers' HBM time (docs/twin-experiments.md §SwiftCache)",
    keys: [
      {
        path: 'swiftcache.max_context_vs_chunked8k',
        what: "the master's longest context at 96 GB, SwiftCache (Mnemo's two-plane stream over what idle workers lend) ÷ vLLM chunked prefill 8K alone (paper Fig. 9: 1.58–3.98× over 96/80/32/24 GB)",
        target: paperBand(1.58, 3.98),
      },
      {
        path: 'swiftcache.ttft_p99_vs_offload',
        what: "P99 TTFT, PCIe CPU offload ÷ SwiftCache lending on the node-manager's demand rule (kv-core SessionDemand: live requests plus the sessions served within the elastic window), lowest over the rates where offload's GPU is under 80% busy (paper Fig. 7: −54% and −58%, i.e. 2.17× and 2.38×)",
        target: paperBand(2.17, 2.38),
      },
      {
        path: 'swiftcache.worker_interference',
        what: "the master's KV traffic's share of a worker's HBM time, worst over Fig. 8's lengths back to back and the TTFT runs (paper Fig. 8: worker TTFT up to +9.7%)",
        target: { op: '<=', value: 0.1 },
      },
      {
        path: 'swiftcache.ttft_p99_vs_offload_lend_idle',
        what: "the same P99 ratio with every idle worker unit lent (the paper's Algorithm 1, which looks at the worker's window only)",
      },
      {
        path: 'swiftcache.ttft_p99_vs_offload_live_only',
        what: "the same P99 ratio on the node-manager's earlier demand rule: live requests alone",
      },
      ...[96, 80, 32, 24].map((gb) => ({
        path: `swiftcache.max_context_vs_chunked8k_by_gb.${gb}`,
        what: `max context ÷ vLLM chunked 8K at ${gb} GB (Mnemo's two-plane stream; paper Fig. 9: 1.58–3.98× over the four points)`,
      })),
      ...[96, 24].map((gb) => ({
        path: `swiftcache.max_context_eq5_vs_chunked8k_by_gb.${gb}`,
        what: `the same at ${gb} GB with the paper's Eq. 1–5 (one resident layer)`,
      })),
      ...['15/min', '30/min', '60/min', '120/min'].map((rate) => ({
        path: `swiftcache.ttft_p99_vs_offload_by_rate.${rate}`,
        what: `P99 TTFT, offload ÷ SwiftCache (live requests + recent sessions) at ${rate} arrivals`,
      })),
      {
        path: 'swiftcache.worker_nvlink_share',
        what: "the master's KV traffic's share of a worker's NVLink time, worst case (the link a worker's own serving does not use)",
      },
      {
        path: 'robustness.targets_met_in_every_case',
        what: 'the three headline keys at their targets with each hardware figure (H20 FLOP/s, HBM bandwidth, HBM size, NVLink, PCIe) at −20% and +20%',
        target: { op: '=', value: true },
      },
      { path: 'robustness.max_context_vs_chunked8k_range', what: 'max context ratio at 96 GB, lowest and highest over those cases' },
      {
        path: 'robustness.ttft_p99_vs_offload_range',
        what: 'P99 TTFT ratio (live requests + recent sessions), lowest and highest over those cases',
      },
      {
        path: 'robustness.ttft_p99_vs_offload_lend_idle_range',
        what: 'P99 TTFT ratio (every idle unit lent), lowest and highest over those cases',
      },
      {
        path: 'robustness.ttft_p99_vs_offload_live_only_range',
        what: 'P99 TTFT ratio (earlier live-only rule), lowest and highest over those cases',
      },
      { path: 'robustness.worker_interference_range', what: 'worker HBM share, lowest and highest over those cases' },
      ...[0, 1].map((i) => ({
        path: `robustness.worker_live_tokens.rows.${i}.ttft_p99_vs_offload`,
        what: `P99 TTFT ratio (live requests + recent sessions) with each worker keeping ${i === 0 ? 'half' : 'twice'} its stated 64 × 2K tokens for its own chats (an assumption, not a hardware figure)`,
      })),
      ...[0, 1].map((i) => ({
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
    what: "DroidSpeak's serving experiment on the twin (npm run twin -- droidspeak): Llama-3.1-8B on a modelled A100, HotpotQA-like contexts (Table 2) whose base-model KV and E cache come from another node over 25 GB/s HDR InfiniBand, uniform arrivals; full prefill, full reuse and kv-core's choosePlan on the profiles the reference engine measured on the trained pairs (bench/results/droidspeak.json), 8-layer patterns mapped to 32 layers by fraction; SLO: P90 TTFT within 3× full prefill's unloaded TTFT (docs/twin.md §DroidSpeak at scale)",
    keys: [
      {
        path: 'droidspeak.throughput_vs_full_prefill_at_slo',
        what: "throughput at the TTFT SLO, Mnemo's plan choice (the node's load, the SLO as budget with each request's wait charged) within a 1% quality floor ÷ full prefill, mean of the trained pairs (paper Fig. 15: 2–3×)",
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
        what: 'the same throughput ratio (1% top-1 floor) for the best pair of the best pair kind (base → full FT, FT ↔ FT, base → LoRA, LoRA ↔ LoRA)',
        target: { op: '>=', value: 2 },
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
      {
        path: 'droidspeak.by_floor_cheapest.10pct.throughput_vs_full_prefill_at_slo',
        what: 'throughput ratio with the cheapest plan within a 10% floor',
        label: 'a looser floor than the paper’s 1%',
      },
      {
        path: 'droidspeak.by_floor_cheapest.10pct.quality_loss',
        what: 'its quality loss on the profiling split',
        label: 'a looser floor than the paper’s 1%',
      },
      {
        path: 'droidspeak.by_floor.10pct.throughput_vs_full_prefill_at_slo',
        what: "throughput ratio with Mnemo's plan choice within a 10% floor",
        label: 'a looser floor than the paper’s 1%',
      },
      {
        path: 'droidspeak.by_floor.10pct.quality_loss',
        what: 'its quality loss on the profiling split',
        label: 'a looser floor than the paper’s 1%',
      },
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
        what: "fetching the KV and E cache over InfiniBand ÷ the unloaded prefill, the trained frontiers' plan closest to half the layers recomputed, largest over 1K–32K tokens (paper Fig. 16: ≤ 11%)",
        target: { op: '<=', value: 0.11 },
      },
      {
        path: 'droidspeak.constructed_throughput_vs_full_prefill_at_slo',
        what: 'throughput ratio at the 1% floor on the planted pair mnemo-medium-ds35 (2 of 8 layers perturbed)',
        label: 'constructed pair: a test of the mechanism, not a finding',
      },
      {
        path: 'robustness.target_met_in_every_case',
        what: 'the headline ratio at ≥ 2× with each hardware figure (GPU FLOP/s, GPU memory bandwidth, InfiniBand) at −20% and +20%',
        target: { op: '=', value: true },
      },
      { path: 'robustness.throughput_vs_full_prefill_at_slo_range', what: 'the headline ratio, lowest and highest over those cases' },
      {
        path: 'robustness.fetch_share_of_prefill_half_plan_max_range',
        what: 'the fetch share of the half plan, lowest and highest over those cases',
      },
      { path: 'experiment_wall_s', what: 'wall time of the whole command on this machine (s)' },
    ],
  },
  'twin-fastswitch': {
    what: "FastSwitch's experiment on the twin (npm run twin -- fastswitch): Llama-8B on a modelled A10 with 60 GB of host swap space, ShareGPT-like conversations, preemptive priority scheduling under Markov and Random priority traces; vLLM-style per-block, per-layer swaps against block groups, adaptive async swap-in and host-copy reuse, all kv-core code, over the per-call copy dispatch (docs/twin-experiments.md)",
    keys: [
      {
        path: 'fastswitch.p99_ttft_ratio',
        what: "P99 TTFT, vLLM ÷ FastSwitch, at the paper's dispatch (§2.2's lowest: 90 µs per call), Markov f = 0.04 (paper Fig. 8: 3.7–4.1×)",
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
        what: 'swap-out blocks, 1 − FastSwitch ÷ vLLM (paper Table 1: 53%)',
        target: paperBand(
          0.53,
          0.53,
          "Table 1 is §5.3.3's microbenchmark of host-copy reuse alone; the twin's figure adds the swaps that priority scheduling saves",
        ),
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
      {
        path: 'robustness.targets_met_in_every_case',
        what: 'the three targeted keys met with each hardware figure (GPU FLOP/s, memory bandwidth, KV capacity, PCIe bandwidth, per-call dispatch) at −20% and +20%',
        target: { op: '=', value: true },
      },
      { path: 'robustness.p99_ttft_ratio_range', what: 'P99 TTFT ratio, lowest and highest over those cases' },
      { path: 'robustness.p999_tbt_ratio_range', what: 'P99.9 TBT ratio, lowest and highest over those cases' },
      { path: 'robustness.swap_out_reduction_range', what: 'swap-out reduction, lowest and highest over those cases' },
    ],
  },
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
    what: "A slice of Mooncake's conversation trace replayed open-loop through a real cluster (NATS, scheduler, four sim node-managers) once per scheduler policy, the twin's prefill pool on the same slice beside each pass (docs/traces.md §4)",
    keys: [
      { path: 'keys.hit_rate_gap_max', what: 'largest |live − twin| hit rate over the policies', target: { op: '<=', value: 0.05 } },
      {
        path: 'keys.order_agrees',
        what: 'live and twin order the policies alike by mean TTFT on every pair the live passes separate (means > 10% apart)',
        target: { op: '=', value: true },
      },
      { path: 'keys.separated_pairs', what: 'policy pairs the live passes separate' },
      ...['least-loaded', 'local', 'conductor', 'llmd', 'symphony'].flatMap((p) => [
        { path: `policies.${p}.live.ttft_mean_ms`, what: `${p}: live mean TTFT, ms` },
        { path: `policies.${p}.live.hit_rate`, what: `${p}: live share of prompt tokens served from cache` },
        { path: `policies.${p}.twin.hit_rate`, what: `${p}: the twin's on the same slice` },
      ]),
      { path: 'keys.failed', what: 'requests that failed, all passes', target: { op: '=', value: 0 } },
      { path: 'wall_s', what: 'wall seconds of every live pass (2 shared cores)', target: { op: '<=', value: 900 } },
    ],
  },
  'twin-trace-mooncake-conversation_trace': {
    what: "Mooncake's published FAST'25 conversation trace (12,031 requests, one hour) through the twin's prefill pool: LLaMA3-70B on modelled 8 × A800 instances, Figs. 5, 9 and 10 against the paper, the load fitted once (docs/traces.md)",
    keys: [
      { path: 'trace.requests', what: 'requests replayed (the whole hour)', target: { op: '=', value: 12031 } },
      {
        path: 'trace.max_hit_rate',
        what: "share of prompt tokens an unbounded cache could reuse (Table 2's cache ratio: 40%, within 0.05)",
        target: { op: '>=', value: 0.35 },
      },
      { path: 'setup.fitted.value', what: 'the one fitted parameter: arrivals × this puts local cache-aware mean TTFT at 3.58 s' },
      ...[
        ['fig5_random_over_local', 'Fig. 5: random ÷ local cache-aware mean TTFT (paper 5.49)'],
        ['fig5_leastloaded_over_local', 'Fig. 5: least-loaded ÷ local cache-aware mean TTFT (paper 1.47)'],
        ['fig5_global_over_local', 'Fig. 5: conductor (global cache-aware) ÷ local cache-aware mean TTFT (paper 0.86)'],
        ['fig10_global_over_local_hit', 'Fig. 10: global ÷ local cache hit rate, 10 nodes × 3M tokens (paper 2.22)'],
        ['fig10_global_over_local_prefill', 'Fig. 10: global ÷ local mean prefill GPU time (paper 0.76)'],
      ].flatMap(([k, what]) => [
        { path: `paper_check.${k}.twin`, what },
        { path: `paper_check.${k}.within_25pct`, what: `${k}: within ±25% of the paper`, target: { op: '=', value: true } },
      ]),
      {
        path: 'fig9.at_3m_over_max',
        what: 'Fig. 9: hit rate of one 3M-token cache ÷ the maximum (paper: under half)',
        target: { op: '<', value: 0.5 },
      },
      {
        path: 'fig9.at_50m_over_max',
        what: 'Fig. 9: hit rate of one 50M-token cache ÷ the maximum (paper: nearly all)',
        target: { op: '>=', value: 0.9 },
      },
      ...['symphony', 'conductor', 'local', 'llmd'].flatMap((p) => [
        { path: `policies.${p}.ttft_mean_ms`, what: `${p}: mean TTFT at 16 nodes, ms` },
        { path: `policies.${p}.hit_rate`, what: `${p}: share of prompt tokens reused (own cache or moved from a peer)` },
      ]),
      {
        path: 'symphony_vs_conductor.ttft_mean',
        what: "conductor ÷ symphony mean TTFT on the whole trace at 16 nodes (the routing issue's target: symphony ahead)",
        target: { op: '>', value: 1 },
      },
      { path: 'trace_wall_s', what: 'wall seconds of the whole command, every policy (2 shared cores)', target: { op: '<=', value: 1800 } },
    ],
  },
};
