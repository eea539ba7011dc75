import type { Counter, Histogram } from 'prom-client';
import { metricBuilders, type ServiceMetrics } from '@mnemo/service-kit';

/** Profiling and plan-service metrics, registered on the profiler's registry. */
export class ProfilingMetrics {
  readonly patterns: Counter;
  readonly jobs: Counter<'outcome'>;
  readonly patternSeconds: Histogram;
  readonly plans: Counter<'outcome'>;

  constructor(metrics: ServiceMetrics) {
    const { counter, histogram } = metricBuilders(metrics.registry);
    this.patterns = counter('mnemo_profiler_patterns_profiled_total', 'Reuse patterns measured by profiling jobs');
    this.jobs = counter('mnemo_profiler_jobs_total', 'Profiling job runs ended, by outcome (done, failed, paused)', ['outcome']);
    this.patternSeconds = histogram(
      'mnemo_profiler_pattern_seconds',
      'Wall time to measure one pattern over the job dataset',
      [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 120],
    );
    this.plans = counter('mnemo_profiler_plans_total', 'Plan requests answered, by outcome (plan, full_prefill, no_frontier)', ['outcome']);
  }
}
