import { SpanStatusCode, type Span } from '@opentelemetry/api';
import { Inject, Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram } from 'prom-client';
import { ServiceMetrics } from '@mnemo/service-kit';
import type { InferOperation } from './infer.command.js';

/** Outcome label for an error: its domain code, else `internal`. */
export function outcomeOf(e: unknown): string {
  const code = (e as { code?: unknown })?.code;
  return typeof code === 'string' ? code : 'internal';
}

/**
 * Timing of one inference for Prometheus: request count by outcome, wall time, time to
 * first token and time per output token. `end` counts once, whichever path ends first.
 */
export class InferTimer {
  private readonly startedAt = performance.now();
  private firstTokenAt?: number;
  private lastTokenAt?: number;
  private tokens = 0;
  private ended = false;
  model?: string;
  /** The request's trace span: marked at the first token, ended with the request. */
  span?: Span;

  constructor(
    private readonly metrics: ServiceMetrics,
    private readonly operation: InferOperation,
  ) {}

  tokensArrived(count: number): void {
    if (count <= 0) return;
    const now = performance.now();
    if (this.firstTokenAt === undefined) {
      this.firstTokenAt = now;
      this.span?.addEvent('first_token');
      if (this.model) this.metrics.timeToFirstToken.observe({ model: this.model }, (now - this.startedAt) / 1000);
    }
    this.lastTokenAt = now;
    this.tokens += count;
  }

  end(outcome: string): void {
    if (this.ended) return;
    this.ended = true;
    if (this.span) {
      this.span.setAttribute('mnemo.outcome', outcome);
      if (outcome !== 'ok') this.span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
      this.span.end();
    }
    this.metrics.requests.inc({ operation: this.operation, outcome });
    this.metrics.requestDuration.observe({ operation: this.operation }, (performance.now() - this.startedAt) / 1000);
    if (this.model && this.tokens > 1 && this.firstTokenAt !== undefined && this.lastTokenAt !== undefined) {
      this.metrics.timePerOutputToken.observe({ model: this.model }, (this.lastTokenAt - this.firstTokenAt) / 1000 / (this.tokens - 1));
    }
  }
}

/** Failovers of requests whose node went down, for InferWatch. */
export interface FailoverMetrics {
  /**
   * `continued` (re-dispatched), `completed` (nothing was left to generate), `exhausted` (GATEWAY_FAILOVER_RETRIES used), `failed` (no node
   * took it).
   */
  counted(outcome: 'continued' | 'completed' | 'exhausted' | 'failed'): void;
  /** The client's gap: last event before the node died → first event of the continuation. */
  gap(seconds: number): void;
}

/** Continuations that found no scheduler or node yet and waited to try again. */
export interface RedispatchMetrics {
  retried(): void;
}

/** Counts events held for clients that have not read them yet, over all requests. */
export interface BufferGauge {
  inc(n?: number): void;
  dec(n?: number): void;
}

@Injectable()
export class InferMetrics {
  /** Token events buffered in the gateway for their clients (bounded by GATEWAY_STREAM_BUFFER_EVENTS per request). */
  readonly bufferedEvents: Gauge;

  readonly failover: FailoverMetrics;

  readonly redispatch: RedispatchMetrics;

  constructor(@Inject(ServiceMetrics) private readonly metrics: ServiceMetrics) {
    this.bufferedEvents = new Gauge({
      name: 'mnemo_gateway_buffered_events',
      help: 'Token events the gateway holds for clients that have not read them yet (all requests)',
      registers: [metrics.registry],
    });
    const failovers = new Counter({
      name: 'mnemo_gateway_failovers_total',
      help: 'Requests whose node went down, by outcome: continued on another node, completed, exhausted (retry limit) or failed',
      labelNames: ['outcome'],
      registers: [metrics.registry],
    });
    const gap = new Histogram({
      name: 'mnemo_gateway_failover_gap_seconds',
      help: 'Silence a failed-over client saw: its last token event before the node died to the first of the continuation',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 1.5, 2, 3, 5, 10, 30],
      registers: [metrics.registry],
    });
    this.failover = { counted: (outcome) => failovers.inc({ outcome }), gap: (s) => gap.observe(s) };
    const retries = new Counter({
      name: 'mnemo_gateway_failover_retries_total',
      help: 'Times a continuation found no scheduler or node to take it (NATS restarting, nodes re-registering) and waited to try again',
      registers: [metrics.registry],
    });
    this.redispatch = { retried: () => retries.inc() };
  }

  start(operation: InferOperation): InferTimer {
    return new InferTimer(this.metrics, operation);
  }

  /** A request refused before it became a command (bad shape, no auth). */
  rejected(operation: InferOperation, e: unknown): void {
    this.metrics.requests.inc({ operation, outcome: outcomeOf(e) });
  }
}
