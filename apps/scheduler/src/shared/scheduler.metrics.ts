import { Counter, Gauge } from 'prom-client';
import type { ServiceMetrics } from '@mnemo/service-kit';

/** Scheduler-specific metrics, registered on the service's registry. */
export class SchedulerMetrics {
  readonly liveNodes: Gauge;
  readonly dispatches: Counter<'outcome'>;
  readonly nodesDropped: Counter<'reason'>;

  private liveNodesSource: () => number = () => 0;

  constructor(metrics: ServiceMetrics) {
    const registers = [metrics.registry];
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const self = this;
    this.liveNodes = new Gauge({
      name: 'mnemo_scheduler_live_nodes',
      help: 'Nodes with a recent heartbeat',
      registers,
      // Sampled at scrape time so the gauge can never drift from the registry.
      collect() {
        this.set(self.liveNodesSource());
      },
    });
    this.dispatches = new Counter({
      name: 'mnemo_scheduler_dispatches_total',
      help: 'Dispatches of an inference to a node, by outcome (admitted, refused, unreachable)',
      labelNames: ['outcome'],
      registers,
    });
    this.nodesDropped = new Counter({
      name: 'mnemo_scheduler_nodes_dropped_total',
      help: 'Nodes removed from the registry, by reason (timeout, left, unreachable)',
      labelNames: ['reason'],
      registers,
    });
  }

  /** Where the live-node gauge reads its value. */
  observeLiveNodes(source: () => number): void {
    this.liveNodesSource = source;
  }
}
