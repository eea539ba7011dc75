import { Counter, Gauge, Histogram } from 'prom-client';
import type { ServiceMetrics } from '@mnemo/service-kit';

/** Shared with the scheduler's counter of the same name: each service judges the advisories whose fate it knows. */
export const ADVISORY_OUTCOMES_HELP =
  'Advisories judged (kv-core advisory.outcome), by outcome and reason: hit (found, held), missed (partial, absent: on the advised ' +
  'node; moved: ran elsewhere), spurious (expired: no request came). Nodes judge arrivals, the scheduler moves and expiries';

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
    const registers = [metrics.registry];
    // Read at scrape time from whatever `observe` wired in last.
    const sourced = (name: string, help: string, source: keyof GaugeSources) => {
      const sources = () => this.sources;
      return new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(sources()[source]());
        },
      });
    };
    this.running = sourced('mnemo_node_running_sequences', 'Sequences admitted to the batch (prefilled, decoding)', 'running');
    this.waiting = sourced('mnemo_node_waiting_sequences', 'Sequences queued for admission', 'waiting');
    this.paused = sourced(
      'mnemo_node_paused_sequences',
      'Sequences paused by backpressure (their client reads slowly); they keep their KV',
      'paused',
    );
    this.flowControl = new Counter({
      name: 'mnemo_node_flow_control_total',
      help: 'Backpressure messages acted on, by action (pause, resume)',
      labelNames: ['action'],
      registers,
    });
    this.kvUsage = sourced(
      'mnemo_node_kv_usage_ratio',
      'Share of the engine KV capacity held by live sequences (0-1), as sent in heartbeats',
      'kvUsage',
    );
    this.iterations = new Counter({ name: 'mnemo_node_iterations_total', help: 'Iterations of the continuous-batching loop', registers });
    this.batchedIterations = new Counter({
      name: 'mnemo_node_batched_iterations_total',
      help: 'Iterations in which one engine call (prefill or decode) covered more than one sequence',
      registers,
    });
    this.batchSize = new Histogram({
      name: 'mnemo_node_batch_size',
      help: 'Sequences per engine call, by phase (prefill, decode)',
      labelNames: ['phase'],
      buckets: batchBuckets,
      registers,
    });
    this.cancelled = new Counter({
      name: 'mnemo_node_cancelled_total',
      help: 'Requests stopped before finishing, by reason (client, deadline, shutdown, abandoned: a dispatch the scheduler gave up on)',
      labelNames: ['reason'],
      registers,
    });
    this.tokens = new Counter({ name: 'mnemo_node_generated_tokens_total', help: 'Tokens generated', registers });
    this.preemptions = new Counter({
      name: 'mnemo_node_preemptions_total',
      help: 'Running sequences preempted: their device KV swapped out to host memory or dropped (recomputed when resumed)',
      registers,
    });
    this.cachedPromptTokens = new Counter({
      name: 'mnemo_node_prompt_tokens_cached_total',
      help:
        'Prompt tokens whose KV was not computed: the device prefix cache, or ' +
        'restored from the host or SSD pool or a peer (usage cached_tokens)',
      registers,
    });
    this.computedPromptTokens = new Counter({
      name: 'mnemo_node_prompt_tokens_computed_total',
      help: 'Prompt tokens prefilled by compute',
      registers,
    });
    this.kvPlanMisses = new Counter({
      name: 'mnemo_node_kv_plan_misses_total',
      help: 'Engine calls refused for lack of KV blocks although planned to fit (their sequences were requeued)',
      registers,
    });
    this.restoreFallbacks = new Counter({
      name: 'mnemo_node_restore_fallbacks_total',
      help:
        'Sequences a prefill pass went on without because their KV restore failed (a ' +
        'peer past its chunk deadline, a corrupt copy); each recomputes in a later pass',
      registers,
    });
    this.swaps = new Counter({
      name: 'mnemo_node_swaps_total',
      help: 'Sequences swapped between device and host KV memory, by direction (out, in) and mode of a swap-in (sync, async)',
      labelNames: ['direction', 'mode'],
      registers,
    });
    this.swapBytes = new Counter({
      name: 'mnemo_node_swap_bytes_total',
      help: 'KV bytes copied by swaps, by direction (out, in)',
      labelNames: ['direction'],
      registers,
    });
    this.swapWait = new Counter({
      name: 'mnemo_node_swap_wait_seconds_total',
      help: 'Time the iteration loop stood still waiting on swap copies (swap-outs, synchronous swap-ins, forced settles)',
      registers,
    });
    this.swapHeldBlocks = new Counter({
      name: 'mnemo_node_swap_held_blocks_total',
      help: 'KV blocks swap-outs left out of their copy because the KV store host pool keeps them (one host copy)',
      registers,
    });
    this.queueWait = new Histogram({
      name: 'mnemo_node_queue_seconds',
      help: 'Time a request waited in the node queue from admission to its first prefill (resumed preempted sequences not counted)',
      buckets: queueBuckets,
      registers,
    });
    this.advisoryOutcomes = new Counter({
      name: 'mnemo_advisory_outcomes_total',
      help: ADVISORY_OUTCOMES_HELP,
      labelNames: ['outcome', 'reason'],
      registers,
    });
  }

  /** Where the gauges read their values at scrape time. */
  observe(sources: GaugeSources): void {
    this.sources = sources;
  }
}
