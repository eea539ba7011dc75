import { Counter, Histogram } from 'prom-client';
import type { ServiceMetrics } from '@mnemo/service-kit';

/** Profiling and plan-service metrics, registered on the profiler's registry. */
export class ProfilingMetrics {
  readonly patterns: Counter;
  readonly jobs: Counter<'outcome'>;
  readonly patternSeconds: Histogram;
  readonly plans: Counter<'outcome'>;

  constructor(metrics: ServiceMetrics) {
    const registers = [metrics.registry];
    this.patterns = new Counter({
      name: 'mnemo_profiler_patterns_profiled_total',
      help: 'Reuse patterns measured by profiling jobs',
      registers,
    });
    this.jobs = new Counter({
      name: 'mnemo_profiler_jobs_total',
      help: 'Profiling job runs ended, by outcome (done, failed, paused)',
      labelNames: ['outcome'],
      registers,
    });
    this.patternSeconds = new Histogram({
      name: 'mnemo_profiler_pattern_seconds',
      help: 'Wall time to measure one pattern over the job dataset',
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 120],
      registers,
    });
    this.plans = new Counter({
      name: 'mnemo_profiler_plans_total',
      help: 'Plan requests answered, by outcome (plan, full_prefill, no_frontier)',
      labelNames: ['outcome'],
      registers,
    });
  }
}
