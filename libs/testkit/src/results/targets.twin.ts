// Headline keys and targets of the twin's calibration, validation and first experiments, and the chaos run: see targets.ts.
import { above, atLeast, atMost, equals, paperBand, rangeOverCases, type BenchmarkTargets, type HeadlineKey } from './targets.types.js';

/** The systems twin-validate holds against the live multi-round passes, in the order its rows list them. */
const VALIDATED = ['symphony', 'llmd', 'infercept', 'recompute'];
/** The routers twin-validate-engine holds against the live passes on the reference engine. */
const ENGINE_VALIDATED = ['symphony', 'llmd', 'conductor'];
/** The systems `twin plan` sizes a cluster for, in the order of its report. */
const PLANNED = ['symphony', 'recompute', 'infercept', 'llmd'];

export const TWIN_TARGETS: Record<string, BenchmarkTargets> = {
  'twin-validate': {
    what:
      "The twin (libs/twin, docs/twin.md): the multi-round benchmark's workload and cluster in virtual time over kv-core's policies, " +
      "costs from this machine's calibration, against the live run's per-pass TTFTs; and one simulated hour of 1,024 users on 8 instances",
    keys: [
      {
        path: 'validation.ttft_p50_error_max',
        what:
          'TTFT p50, the twin against the mean of the live passes (absolute ' +
          'difference ÷ that mean), the largest over every configuration',
        target: atMost(0.15),
      },
      ...VALIDATED.map((p): HeadlineKey => ({ path: `validation.ttft_p50_error.${p}`, what: `TTFT p50 error, ${p}` })),
      ...VALIDATED.flatMap((p): HeadlineKey[] => [
        { path: `validation.ttft_p99_error.${p}`, what: `TTFT p99 error, ${p}` },
        { path: `validation.ttft_p99_twin_ms.${p}`, what: `TTFT p99 in the twin, ${p} (ms, median of seeds)` },
        { path: `validation.ttft_p99_live_range_ms.${p}`, what: `TTFT p99 of the live passes, ${p}: lowest, highest (ms)` },
      ]),
      ...VALIDATED.map((p): HeadlineKey => ({
        path: `validation.ttft_p50_error_uncontended.${p}`,
        what:
          `TTFT p50 error, ${p}, against only the live passes whose TPOT ` +
          'was within 1.1× the twin’s (nodes at the modelled speed; none: —)',
      })),
      {
        path: 'validation.policy_order_matches',
        what: 'the twin orders the headline systems by p50 and by p99 as the live run does',
        target: equals(true),
      },
      { path: 'validation.policy_order_p50_matches', what: 'the same, by p50 alone' },
      {
        path: 'validation.policy_order_matches_where_live_separates',
        what:
          'the same, over the pairs whose live per-pass ranges do not overlap (pairs the ' +
          'live run did not tell apart left out; validation.order_disagreements lists each)',
      },
      {
        path: 'scale.sim_hour_1024_users_s',
        what: 'wall time of one simulated hour of 1,024 users on 8 instances (s)',
        target: atMost(600),
      },
      { path: 'scale.cpu_s', what: 'CPU time the twin spent in that run (s): the rest of the wall time it waited for a core' },
      { path: 'scale.events_per_wall_s', what: 'twin events per wall-clock second in that run' },
    ],
  },
  'twin-validate-engine': {
    what:
      'The twin against the multi-round benchmark on the reference engine (npm run twin -- validate --engine): its compute port ' +
      'fitted on the calibration seed’s traced steps and frozen, the validation seed’s sessions and live passes never seen by the fit',
    keys: [
      { path: 'inputs.compute.fitted_on_seed', what: 'seed of the calibration run the compute port was fitted on' },
      { path: 'inputs.compute.validated_on_seed', what: 'seed of the live passes compared here' },
      {
        path: 'inputs.request_path.scale',
        what:
          'factor on the calibration file’s request-path overheads, fitted so the twin replaying the calibration seed spends as long ' +
          'outside the nodes per request as the live calibration run did',
      },
      {
        path: 'validation.ttft_p50_error_max',
        what: 'TTFT p50, the twin against the mean of the live passes (absolute difference ÷ that mean), the largest over the routers',
        target: atMost(0.15),
      },
      ...ENGINE_VALIDATED.flatMap((p): HeadlineKey[] => [
        { path: `validation.ttft_p50_error.${p}`, what: `TTFT p50 error, ${p}` },
        { path: `validation.ttft_p99_error.${p}`, what: `TTFT p99 error, ${p}` },
        { path: `validation.ttft_p99_twin_ms.${p}`, what: `TTFT p99 in the twin, ${p} (ms, median of seeds)` },
        { path: `validation.ttft_p99_live_range_ms.${p}`, what: `TTFT p99 of the live passes, ${p}: lowest, highest (ms)` },
      ]),
      { path: 'validation.policy_order_matches', what: 'the twin orders the routers by p50 and by p99 as the live means do' },
      {
        path: 'validation.policy_order_matches_where_live_separates',
        what: 'the same, over the pairs whose live per-pass ranges do not overlap (validation.order_disagreements lists each)',
        target: equals(true),
      },
    ],
  },
  'twin-calibration': {
    what:
      "The twin's measured costs (npm run twin -- calibrate): service overheads and links, " +
      'each from a microbenchmark on this machine, never fitted to an end-to-end TTFT',
    keys: [
      { path: 'overheads.schedule_ms', what: 'scheduler CPU per request (ms)' },
      { path: 'overheads.prefill_cpu_ms', what: 'node batch-loop CPU per prefill iteration, outside the engine (ms)' },
      { path: 'overheads.decode_cpu_ms', what: 'node batch-loop CPU per decode iteration, outside the engine (ms)' },
      {
        path: 'overheads.request_path_p50_ms',
        what:
          "a request's path outside the node (client, NATS hops, scheduler, dispatch, the first token event back), timed " +
          'whole on an idle cluster with nothing to compute, median (ms; the twin draws it per request from the samples)',
      },
      {
        path: 'overheads.node_prefill_path_ms',
        what:
          "the node's own time for a prefill with nothing to compute, timed whole on an " +
          "idle cluster: base (ms; the twin charges this in place of the batch loop's CPU)",
      },
      { path: 'overheads.node_prefill_path_ms_per_ktoken', what: 'the same, per 1,000 prompt tokens (ms)' },
      { path: 'overheads.node_decode_path_ms', what: "the node's own time per decode step of one sequence with nothing to compute (ms)" },
      { path: 'links.peer.dispatch_ms', what: 'peer layer stream, per call (ms)' },
      { path: 'links.host_load.dispatch_ms', what: 'host-pool layer load, per call (ms)' },
    ],
  },
  chaos: {
    what:
      'Chaos run on loopback, reference engine: nodes killed and restarted, NATS restarted, ' +
      'SSD extents of chunks a later turn restores corrupted and the node holding ' +
      'them paused while others pull from it, under a seeded chat workload; a fault ' +
      'ledger matched against the counters; completed requests re-run on a clean cluster',
    keys: [
      { path: 'lost', what: 'requests with no answer at all', target: atMost(0) },
      { path: 'mismatched_tokens', what: 'tokens differing from the clean re-run', target: equals(0) },
      { path: 'duplicated_tokens', what: 'tokens a client saw twice', target: atMost(0) },
      {
        path: 'failover_gap_ms_p99',
        what: 'largest gap between two tokens of a stream in flight during a fault (continued ones among them), p99 (ms)',
        target: atMost(3000),
      },
      { path: 'gateway_failovers.by_outcome.continued', what: 'streams the gateway continued on another node' },
      {
        path: 'rss_growth_frac_max',
        what: 'RSS growth after warm-up, worst process incarnation (fraction, KV pool excluded)',
        target: atMost(0.2),
      },
      { path: 'recovered_after_nats_restart_s', what: 'seconds from the NATS kill until a new request is served (3 s down)' },
      { path: 'completed', what: 'requests completed' },
      { path: 'failed_clean', what: 'requests that failed with a clear error (each listed in `failures` with its fault)' },
      {
        path: 'failed_unexplained',
        what: 'failed requests no fault of the run explains (each other one has `why_no_recovery`)',
        target: equals(0),
      },
      { path: 'options.engine', what: 'engine the nodes ran (real tokens: reference)', target: equals('reference') },
      { path: 'mismatched_requests', what: 'requests whose text differs from the clean re-run', target: equals(0) },
      {
        path: 'faults.corruptions_read',
        what: "corrupted chunks later read: dropped as corrupt in the targeted node's drop log (behind why)",
        target: atLeast(1),
      },
      {
        path: 'fault_counters.crc_failures',
        what: 'CRC32C failures the nodes counted (must be ≥ faults.corruptions_read: every read corruption caught)',
        target: atLeast(1),
      },
      {
        path: 'faults.detections_answered_correctly',
        what: 'corrupt reads after which every request holding the chunk on that node answered as the clean run did',
        target: atLeast(1),
      },
      {
        path: 'faults.peer_pauses_past_deadline',
        what: 'pauses of a node while another pulled from it, past the pull deadline',
        target: atLeast(1),
      },
      {
        path: 'fault_counters.peer_deadlines',
        what: 'peer pulls given up at their deadline (hung peer detected)',
        target: atLeast(1),
      },
      { path: 'faults.ledger_unmatched', what: 'ledger entries whose expected detection did not happen', target: equals(0) },
    ],
  },
  'twin-symphony': {
    what:
      "Symphony's experiment on the discrete-event twin at the paper's scale (8 × Llama-3.1-8B " +
      "on modelled A100s, closed-loop users on ShareGPT-like sessions): kv-core's " +
      'symphony policy against vLLM-style recompute, InferCept-style sticky offload and ' +
      'llm-d-style scoring, costs from the hardware tables (docs/twin-experiments.md)',
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
        what:
          'users served within the TPOT SLO, symphony ÷ vLLM as the paper ran it (paper: ' +
          '4×; a lower bound when symphony meets the SLO at the top of the sweep)',
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
        target: above(1),
      },
      {
        path: 'symphony.ttft_vs_conductor',
        what: "mean TTFT, Mooncake Conductor's Algorithm 1 (threshold swept on another seed) ÷ symphony, at 512 users",
        target: above(1),
      },
      {
        path: 'symphony.never_behind',
        what: 'symphony at least as good as llm-d-style and conductor at p50 and p99 TTFT at every user count from 64 to 1,024',
        target: equals(true),
      },
      {
        path: 'symphony.never_behind_beyond_noise.value',
        what:
          'the same read with the noise of one run: at every count, other ÷ symphony at p50 and p99 at least 1 − the A/A spread ' +
          'between symphony on two seeds at that count (symphony.noise)',
        target: equals(true),
      },
      {
        path: 'symphony.never_behind_over_seeds.value',
        what:
          'the same over four seeds: at every count, llm-d-style and conductor ÷ symphony at p50 and p99, each averaged over ' +
          "the experiment's seed, the A/A seed and two more (symphony.over_seeds), at least 1",
        target: equals(true),
      },
      {
        path: 'symphony.never_behind_paired.value',
        what:
          'the same on the same requests: on each seed, p50 and p99 over the turns both runs measured (same session and ' +
          'turn), averaged over the four seeds, llm-d-style and conductor ÷ symphony at least 1 (symphony.paired_over_seeds)',
        target: equals(true),
      },
      {
        path: 'symphony.infercept_imbalance_256',
        what:
          'InferCept-style users held per instance (distinct sessions served in ' +
          'the measured window), max ÷ median at 256 users (paper Fig. 15: 3.1×)',
        target: paperBand(3.1),
      },
      {
        path: 'symphony.missed10_degradation',
        what: "symphony's mean TPOT with 10% of advisories missed, change (paper Fig. 19: +3.1 ms)",
        target: atMost(0.1),
      },
      {
        path: 'symphony.spurious60_degradation',
        what: "symphony's mean TPOT with 60% spurious advisories, change (paper Fig. 20: 2.1%)",
        target: atMost(0.05),
      },
      {
        path: 'robustness.symphony_ahead_in_every_case',
        what:
          'symphony ahead of vLLM as the paper ran it (no prefix cache) in mean TTFT and TPOT with each ' +
          'hardware figure (GPU FLOP/s, GPU memory bandwidth, PCIe, network) at −20% and +20%, at 256 users',
        target: equals(true),
      },
      {
        path: 'robustness.in_paper_bands_in_every_case',
        what: "the TTFT and TPOT ratios at 256 users inside the headlines' paper bands in every one of those cases",
      },
      rangeOverCases('ttft_vs_vllm', 'mean TTFT, vLLM-as-paper ÷ symphony'),
      rangeOverCases('tpot_vs_vllm', 'mean TPOT, vLLM-as-paper ÷ symphony'),
      {
        path: 'symphony.vs_best_vllm.ttft_vs_vllm',
        what: "mean TTFT, vLLM at its best (its prefix cache on) ÷ symphony, largest over the sweep: Mnemo's own claim, no paper band",
      },
      { path: 'symphony.vs_best_vllm.tpot_vs_vllm', what: 'mean TPOT, the same' },
      { path: 'symphony.vs_best_vllm.users_vs_vllm_at_slo', what: 'users within the TPOT SLO, symphony ÷ vLLM at its best' },
    ],
  },
  'twin-plan': {
    what:
      "Capacity plan on the twin (npm run twin -- plan; the README's example): for N closed-loop " +
      "users of Symphony's experiment, the cheapest instances, host GB and SSD TB per node " +
      'at which each serving system meets a P99 TTFT and a mean TPOT SLO, by a bounded search ' +
      'of short twin runs; cost from labelled list prices (docs/twin.md, Capacity planning)',
    keys: [
      ...PLANNED.flatMap((p): HeadlineKey[] => [
        {
          path: `plans.${p}.best.instances`,
          what:
            `${p}: fewest instances (GPUs) at which the whole cluster (every instance ` +
            `and user) meets the SLO, at the cells' memory point (none: cannot meet it)`,
        },
        { path: `plans.${p}.best.cost_usd_per_hour`, what: `${p}: that configuration's cost, $/hour` },
        { path: `plans.${p}.best.ttft_p99_ms`, what: `${p}: the whole cluster's P99 TTFT there, ms` },
        {
          path: `plans.${p}.slice_estimate.instances`,
          what: `${p}: the cells' estimate of the fewest instances, before the whole-cluster runs`,
        },
        {
          path: `plans.${p}.ttft_floor_ms`,
          what:
            `${p}: P99 TTFT floor, ms: the lowest over the plan's runs of each run's P99 of its measured requests' ` +
            `prefill of what they found uncached, on an idle GPU (a true lower bound: no run it made goes under it)`,
        },
      ]),
      { path: 'search.twin_runs', what: 'cell runs the search made, all policies' },
      { path: 'search.whole_cluster_runs', what: 'whole-cluster runs verifying and stepping up the answers, all policies' },
      {
        path: 'process_wall_s',
        what: 'wall seconds of the whole command on this machine (2 shared cores)',
        target: atMost(300),
      },
    ],
  },
  'twin-plan-h100-512': {
    what:
      "twin plan asked as a new user would (not the README's example): 512 users of Symphony's experiment " +
      'on Llama-3.1-8B and H100s within a 500 ms P99 TTFT, each policy answered with a verified ' +
      'size or with the whole-cluster runs that show it cannot meet (npm run twin -- plan --users 512 ' +
      '--model llama-3.1-8b --gpu H100 --slo-ttft-ms 500 --out bench/results/twin-plan-h100-512.json)',
    keys: PLANNED.flatMap((p): HeadlineKey[] => [
      { path: `plans.${p}.best.instances`, what: `${p}: fewest instances at which the whole cluster meets the SLO (none: cannot meet)` },
      { path: `plans.${p}.best.ttft_p99_ms`, what: `${p}: the whole cluster's P99 TTFT there, ms` },
      { path: `plans.${p}.ttft_floor_ms`, what: `${p}: the lowest of its runs' own lower bounds on P99 TTFT, ms` },
      { path: `plans.${p}.reason`, what: `${p}: why it cannot meet, from whole-cluster runs` },
    ]),
  },
};
