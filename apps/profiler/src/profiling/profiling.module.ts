import { Module } from '@nestjs/common';
import { CLOCK, ServiceMetrics, systemClock } from '@mnemo/service-kit';
import { PROFILER_CONFIG, type ProfilerConfig } from '../config/profiler.config.js';
import { FrontierPublisher } from './frontier.publisher.js';
import { GetPairProfileUseCase } from './get-pair-profile.use-case.js';
import { GetProfilingJobUseCase } from './get-profiling-job.use-case.js';
import { PAIR_EVALUATOR, referencePairEvaluator } from './pair-evaluator.port.js';
import { ProfilingController } from './profiling.controller.js';
import { ProfilingJobRunner } from './profiling-job.runner.js';
import { ProfilingMetrics } from './profiling.metrics.js';
import { PROFILING_LIMITS, RUNNER_OPTIONS } from './profiling.tokens.js';
import { StartProfilingJobUseCase } from './start-profiling-job.use-case.js';

@Module({
  controllers: [ProfilingController],
  providers: [
    { provide: PAIR_EVALUATOR, useValue: referencePairEvaluator },
    { provide: CLOCK, useValue: systemClock },
    { provide: ProfilingMetrics, inject: [ServiceMetrics], useFactory: (m: ServiceMetrics) => new ProfilingMetrics(m) },
    {
      provide: PROFILING_LIMITS,
      inject: [PROFILER_CONFIG],
      useFactory: (c: ProfilerConfig) => ({
        maxPrompts: c.PROFILER_MAX_PROMPTS!,
        maxPromptTokens: c.PROFILER_MAX_PROMPT_TOKENS!,
        maxContinuationTokens: c.PROFILER_MAX_CONTINUATION_TOKENS!,
      }),
    },
    {
      provide: RUNNER_OPTIONS,
      inject: [PROFILER_CONFIG],
      useFactory: (c: ProfilerConfig) => ({ pollMs: c.PROFILER_JOB_POLL_MS!, leaseMs: c.PROFILER_JOB_LEASE_MS! }),
    },
    FrontierPublisher,
    ProfilingJobRunner,
    StartProfilingJobUseCase,
    GetProfilingJobUseCase,
    GetPairProfileUseCase,
  ],
  exports: [GetPairProfileUseCase, ProfilingMetrics],
})
export class ProfilingModule {}
