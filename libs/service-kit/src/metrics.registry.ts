import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Buckets in seconds, wide enough for CPU engines (slow) and GPU engines (fast). */
const latencyBuckets = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * Help of `mnemo_advisory_outcomes_total`, which the scheduler and the nodes both export: each
 * judges the advisories whose fate it knows.
 */
export const ADVISORY_OUTCOMES_HELP =
  'Advisories judged (kv-core advisory.outcome), by outcome and reason: hit (found, held), missed (partial, absent: on the advised ' +
  'node; moved: ran elsewhere), spurious (expired: no request came). Nodes judge arrivals, the scheduler moves and expiries';

/**
 * The metrics every service exports. Names follow Prometheus conventions and carry
 * the service in a const label so one scrape config covers the cluster.
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  readonly requests: Counter<'operation' | 'outcome'>;
  readonly requestDuration: Histogram<'operation'>;
  readonly timeToFirstToken: Histogram<'model'>;
  readonly timePerOutputToken: Histogram<'model'>;

  constructor(service: string) {
    this.registry.setDefaultLabels({ service });
    collectDefaultMetrics({ register: this.registry, prefix: 'mnemo_process_' });
    this.requests = new Counter({
      name: 'mnemo_requests_total',
      help: 'Requests handled, by operation and outcome (ok or an error code)',
      labelNames: ['operation', 'outcome'],
      registers: [this.registry],
    });
    const latency = <L extends string>(name: string, help: string, labelNames: readonly L[]): Histogram<L> =>
      new Histogram({ name, help, labelNames, buckets: latencyBuckets, registers: [this.registry] });
    this.requestDuration = latency('mnemo_request_duration_seconds', 'Wall time of a request, by operation', ['operation']);
    this.timeToFirstToken = latency('mnemo_time_to_first_token_seconds', 'Time from request arrival to the first output token', ['model']);
    this.timePerOutputToken = latency(
      'mnemo_time_per_output_token_seconds',
      'Mean time between output tokens after the first, per request',
      ['model'],
    );
  }

  /** Times one operation: counts it with its outcome and observes its duration. */
  async time<T>(operation: string, fn: () => Promise<T>, outcomeOf: (e: unknown) => string = defaultOutcome): Promise<T> {
    const end = this.requestDuration.startTimer({ operation });
    try {
      const r = await fn();
      this.requests.inc({ operation, outcome: 'ok' });
      return r;
    } catch (e) {
      this.requests.inc({ operation, outcome: outcomeOf(e) });
      throw e;
    } finally {
      end();
    }
  }
}

function defaultOutcome(e: unknown): string {
  const code = (e as { code?: unknown })?.code;
  return typeof code === 'string' ? code : 'internal';
}
