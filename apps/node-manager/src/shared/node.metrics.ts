import { Counter, Gauge, Histogram } from 'prom-client';
import type { ServiceMetrics } from '@mnemo/service-kit';

/** Engine-call sizes; dense at the small end where "were these two requests batched?" is asked. */
const batchBuckets = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 128, 256];

interface GaugeSources {
  readonly running: () => number;
  readonly waiting: () => number;
  readonly kvUsage: () => number;
}

/** Node-specific metrics on the service's registry (TTFT/TPOT/requests live in ServiceMetrics). */
export class NodeMetrics {
  readonly running: Gauge;
  readonly waiting: Gauge;
  readonly iterations: Counter;
  readonly batchedIterations: Counter;
  readonly batchSize: Histogram<'phase'>;
  readonly cancelled: Counter<'reason'>;
  readonly tokens: Counter;
  readonly kvUsage: Gauge;
  private sources: GaugeSources = { running: () => 0, waiting: () => 0, kvUsage: () => 0 };

  constructor(metrics: ServiceMetrics) {
    const registers = [metrics.registry];
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const self = this;
    this.running = new Gauge({
      name: 'mnemo_node_running_sequences',
      help: 'Sequences admitted to the batch (prefilled, decoding)',
      registers,
      collect() {
        this.set(self.sources.running());
      },
    });
    this.waiting = new Gauge({
      name: 'mnemo_node_waiting_sequences',
      help: 'Sequences queued for admission',
      registers,
      collect() {
        this.set(self.sources.waiting());
      },
    });
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
      help: 'Requests stopped before finishing, by reason (client, deadline, shutdown)',
      labelNames: ['reason'],
      registers,
    });
    this.tokens = new Counter({ name: 'mnemo_node_generated_tokens_total', help: 'Tokens generated', registers });
    this.kvUsage = new Gauge({
      name: 'mnemo_node_kv_usage_ratio',
      help: 'Share of the engine KV capacity held by live sequences (0-1), as sent in heartbeats',
      registers,
      collect() {
        this.set(self.sources.kvUsage());
      },
    });
  }

  /** Where the gauges read their values at scrape time. */
  observe(sources: GaugeSources): void {
    this.sources = sources;
  }
}
