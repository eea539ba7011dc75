// The scheduler's routing stack as the planner and scheduling specs build it: real kv-core
// tables and a real RoutePlanner over a NodeRegistry, with only the clock and the node ports
// left to each spec.
import { create } from '@bufbuild/protobuf';
import { chunkKeys, ExpectedHoldings, KvDirectory, ReservationBook, SessionTable } from '@mnemo/kv-core';
import { InferenceRequestSchema, type InferenceRequest } from '@mnemo/proto';
import { JsonLogger, ServiceMetrics, systemClock, type Clock } from '@mnemo/service-kit';
import { loadSchedulerConfig } from '../src/config/scheduler.config.js';
import type { DerivedPairsRegistry } from '../src/droidspeak/derived-pairs.registry.js';
import { NodeRegistry, type NodeEntry } from '../src/nodes/node.registry.js';
import type { NodeDispatcher } from '../src/scheduling/node-dispatcher.port.js';
import { RoutePlanner } from '../src/scheduling/route.planner.js';
import { ScheduleInferenceUseCase } from '../src/scheduling/schedule-inference.use-case.js';
import type { NodePrefetcher } from '../src/sessions/node-prefetch.port.js';
import { SchedulerMetrics } from '../src/shared/scheduler.metrics.js';

/** A request of tenant `t` for `tokens` of `model`, its chunk keys the tokens' own, as the gateway sends it. */
export const chunkedRequest = (requestId: string, model: string, tokens: readonly number[]): InferenceRequest =>
  create(InferenceRequestSchema, {
    requestId,
    tenant: 't',
    model,
    tokens: [...tokens],
    chunkKeys: chunkKeys(model, 't', tokens),
    replySubject: '_INBOX.x',
  });

/** A live node serving model `m` by default, idle, its gRPC address `<id>:7000`. */
export const nodeEntry = (nodeId: string, over: Partial<NodeEntry> = {}): NodeEntry => ({
  nodeId,
  models: ['m'],
  modelInfos: [],
  running: 0,
  waiting: 0,
  kvUsage: 0,
  lastSeenMs: 0,
  grpcAddress: `${nodeId}:7000`,
  ...over,
});

export interface PlannerOptions {
  /** Scheduler environment over NATS_URL (SCHEDULER_POLICY and the like). */
  readonly env?: Record<string, string>;
  readonly clock?: Clock;
  readonly pairs?: DerivedPairsRegistry;
  readonly expected?: ExpectedHoldings | null;
  /** Sessions the table keeps, and the reservation book's total (10 reservations per tenant). */
  readonly sessions?: number;
  readonly reservations?: number;
  /** The metrics registry's service name; each spec names its own. */
  readonly service?: string;
}

/** Every table routing reads and writes, over a registry of `nodes`. */
export function routingTables(nodes: readonly NodeEntry[], opts: PlannerOptions = {}) {
  const registry = new NodeRegistry();
  for (const n of nodes) registry.upsert(n);
  const directory = new KvDirectory(1000);
  const sessions = new SessionTable(opts.sessions ?? 10);
  const book = new ReservationBook({ perTenant: 10, total: opts.reservations ?? 10 });
  const clock = opts.clock ?? systemClock;
  const service = new ServiceMetrics(opts.service ?? 'planner-test');
  const metrics = new SchedulerMetrics(service);
  const config = loadSchedulerConfig({ NATS_URL: 'nats://127.0.0.1:4222', ...opts.env });
  return { registry, directory, sessions, book, clock, service, metrics, config };
}

/** A RoutePlanner over {@link routingTables}. */
export function plannerFor(nodes: readonly NodeEntry[], opts: PlannerOptions = {}) {
  const t = routingTables(nodes, opts);
  const sut = new RoutePlanner(
    t.registry,
    t.directory,
    t.sessions,
    t.book,
    t.clock,
    t.metrics,
    t.config,
    opts.pairs,
    opts.expected ?? null,
  );
  return { sut, ...t };
}

/** A logger that writes nothing (errors included): the specs assert outcomes, not log lines. */
export const silentLogger = (): JsonLogger => new JsonLogger('test', 'error', () => undefined);

/** ScheduleInferenceUseCase over a {@link plannerFor} stack, with the node ports given; it logs nothing. */
export function schedulerFor(
  planner: ReturnType<typeof plannerFor>,
  dispatcher: NodeDispatcher,
  prefetcher: NodePrefetcher,
  expected: ExpectedHoldings | null = null,
): ScheduleInferenceUseCase {
  const { sut, registry, metrics, sessions, clock, book } = planner;
  return new ScheduleInferenceUseCase(registry, dispatcher, metrics, silentLogger(), sut, sessions, clock, book, prefetcher, expected);
}
