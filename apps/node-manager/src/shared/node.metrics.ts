import type { Counter, Gauge, Histogram } from 'prom-client';
import { ADVISORY_OUTCOMES_HELP, metricBuilders, type ServiceMetrics } from '@mnemo/service-kit';

/** Engine-call sizes; dense at the small end where "were these two requests batched?" is asked. */
const batchBuckets = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 128, 256];

/** Queue-wait buckets in seconds: from an idle node (a loop turn) to a saturated one. */
const queueBuckets = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

interface GaugeSources {
  readonly running: () => number;
  readonly waiting: () => number;
  readonly paused: () => number;
  readonly kvUsage: () => number;
}

/** Node-specific metrics on the service's registry (TTFT/TPOT/requests live in ServiceMetrics). */
export class NodeMetrics {
  readonly running: Gauge;
  readonly waiting: Gauge;
  readonly paused: Gauge;
  readonly flowControl: Counter<'action'>;
  readonly iterations: Counter;
  readonly batchedIterations: Counter;
  readonly batchSize: Histogram<'phase'>;
  readonly cancelled: Counter<'reason'>;
  readonly tokens: Counter;
  readonly kvUsage: Gauge;
  readonly preemptions: Counter;
  readonly cachedPromptTokens: Counter;
  readonly computedPromptTokens: Counter;
  readonly kvPlanMisses: Counter;
  readonly restoreFallbacks: Counter;
  readonly swaps: Counter;
  readonly swapBytes: Counter;
  readonly swapWait: Counter;
  readonly swapHeldBlocks: Counter;
  readonly advisoryOutcomes: Counter<'outcome' | 'reason'>;
  readonly queueWait: Histogram;
  private sources: GaugeSources = { running: () => 0, waiting: () => 0, paused: () => 0, kvUsage: () => 0 };

  constructor(metrics: ServiceMetrics) {
    const { counter, histogram, sampled } = metricBuilders(metrics.registry);
    // Read at scrape time from whatever `observe` wired in last.
    const sourced = (name: string, help: string, source: keyof GaugeSources) => sampled(name, help, () => this.sources[source]());
    this.running = sourced('mnemo_node_running_sequences', 'Sequences admitted to the batch (prefilled, decoding)', 'running');
    this.waiting = sourced('mnemo_node_waiting_sequences', 'Sequences queued for admission', 'waiting');
    this.paused = sourced(
      'mnemo_node_paused_sequences',
      'Sequences paused by backpressure (their client reads slowly); they keep their KV',
      'paused',
    );
    this.flowControl = counter('mnemo_node_flow_control_total', 'Backpressure messages acted on, by action (pause, resume)', ['action']);
    this.kvUsage = sourced(
      'mnemo_node_kv_usage_ratio',
      'Share of the engine KV capacity held by live sequences (0-1), as sent in heartbeats',
      'kvUsage',
    );
    this.iterations = counter('mnemo_node_iterations_total', 'Iterations of the continuous-batching loop');
    this.batchedIterations = counter(
      'mnemo_node_batched_iterations_total',
      'Iterations in which one engine call (prefill or decode) covered more than one sequence',
    );
    this.batchSize = histogram('mnemo_node_batch_size', 'Sequences per engine call, by phase (prefill, decode)', batchBuckets, ['phase']);
    this.cancelled = counter(
      'mnemo_node_cancelled_total',
      'Requests stopped before finishing, by reason (client, deadline, shutdown, abandoned: a dispatch the scheduler gave up on)',
      ['reason'],
    );
    this.tokens = counter('mnemo_node_generated_tokens_total', 'Tokens generated');
    this.preemptions = counter(
      'mnemo_node_preemptions_total',
      'Running sequences preempted: their device KV swapped out to host memory or dropped (recomputed when resumed)',
    );
    this.cachedPromptTokens = counter(
      'mnemo_node_prompt_tokens_cached_total',
      'Prompt tokens whose KV was not computed: the device prefix cache, or ' +
        'restored from the host or SSD pool or a peer (usage cached_tokens)',
    );
    this.computedPromptTokens = counter('mnemo_node_prompt_tokens_computed_total', 'Prompt tokens prefilled by compute');
    this.kvPlanMisses = counter(
      'mnemo_node_kv_plan_misses_total',
      'Engine calls refused for lack of KV blocks although planned to fit (their sequences were requeued)',
    );
    this.restoreFallbacks = counter(
      'mnemo_node_restore_fallbacks_total',
      'Sequences a prefill pass went on without because their KV restore failed (a ' +
        'peer past its chunk deadline, a corrupt copy); each recomputes in a later pass',
    );
    this.swaps = counter(
      'mnemo_node_swaps_total',
      'Sequences swapped between device and host KV memory, by direction (out, in) and mode of a swap-in (sync, async)',
      ['direction', 'mode'],
    );
    this.swapBytes = counter('mnemo_node_swap_bytes_total', 'KV bytes copied by swaps, by direction (out, in)', ['direction']);
    this.swapWait = counter(
      'mnemo_node_swap_wait_seconds_total',
      'Time the iteration loop stood still waiting on swap copies (swap-outs, synchronous swap-ins, forced settles)',
    );
    this.swapHeldBlocks = counter(
      'mnemo_node_swap_held_blocks_total',
      'KV blocks swap-outs left out of their copy because the KV store host pool keeps them (one host copy)',
    );
    this.queueWait = histogram(
      'mnemo_node_queue_seconds',
      'Time a request waited in the node queue from admission to its first prefill (resumed preempted sequences not counted)',
      queueBuckets,
    );
    this.advisoryOutcomes = counter('mnemo_advisory_outcomes_total', ADVISORY_OUTCOMES_HELP, ['outcome', 'reason']);
  }

  /** Where the gauges read their values at scrape time. */
  observe(sources: GaugeSources): void {
    this.sources = sources;
  }
}
