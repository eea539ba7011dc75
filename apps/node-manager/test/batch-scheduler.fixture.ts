// Test fixture (imported by specs only): a BatchScheduler wired as the node module wires it, with
// a silent logger, from the parts a spec builds itself.
import type { Engine } from '@mnemo/engine';
import { JsonLogger, type Clock, type ServiceMetrics } from '@mnemo/service-kit';
import { BatchScheduler } from '../src/batching/batch.scheduler.js';
import type { SequenceStore } from '../src/batching/sequence.store.js';
import type { TokenSink } from '../src/batching/token.sink.port.js';
import type { NodeManagerConfig } from '../src/config/node-manager.config.js';
import { NodeMetrics } from '../src/shared/node.metrics.js';

/** The constructor's optional ports after the logger, in its order (prompt store, swap manager, cross-model reuse, …). */
type OptionalPorts =
  ConstructorParameters<typeof BatchScheduler> extends [unknown, unknown, unknown, unknown, unknown, unknown, unknown, unknown, ...infer R]
    ? R
    : never;

export interface BatchSchedulerParts {
  readonly store: SequenceStore;
  readonly engine: Engine;
  readonly sink: TokenSink;
  readonly config: NodeManagerConfig;
  readonly clock: Clock;
  readonly metrics: ServiceMetrics;
  /** Default: node metrics over `metrics`. */
  readonly nodeMetrics?: NodeMetrics;
}

export function batchSchedulerOf(p: BatchSchedulerParts, ...ports: OptionalPorts): BatchScheduler {
  const nodeMetrics = p.nodeMetrics ?? new NodeMetrics(p.metrics);
  return new BatchScheduler(
    p.store,
    p.engine,
    p.sink,
    p.config,
    p.clock,
    nodeMetrics,
    p.metrics,
    new JsonLogger('test', 'error', () => undefined),
    ...ports,
  );
}
