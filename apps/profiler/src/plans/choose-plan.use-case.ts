import { Inject, Injectable } from '@nestjs/common';
import { choosePlan, type PlanChoice, type ProfiledPattern } from '@mnemo/kv-core';
import { GetPairProfileUseCase } from '../profiling/get-pair-profile.use-case.js';
import { ProfilingMetrics } from '../profiling/profiling.metrics.js';
import type { ChoosePlanCommand } from './choose-plan.command.js';

export interface PlanAnswer {
  readonly choice: PlanChoice | null;
  readonly jobId: string;
  readonly frontier: readonly ProfiledPattern[];
}

/**
 * DroidSpeak §4.4 online choice, answered from the pair's stored frontier: the plan within
 * the quality floor and latency budget at the caller's load (null: run a full prefill).
 * not_found while the pair has no profile.
 */
@Injectable()
export class ChoosePlanUseCase {
  constructor(
    @Inject(GetPairProfileUseCase) private readonly profiles: GetPairProfileUseCase,
    @Inject(ProfilingMetrics) private readonly metrics: ProfilingMetrics,
  ) {}

  async execute(cmd: ChoosePlanCommand): Promise<PlanAnswer> {
    const profile = await this.profiles.frontier(cmd.base, cmd.derived);
    const choice = choosePlan(profile.frontier, cmd.policy);
    this.metrics.plans.inc({ outcome: choice ? 'plan' : 'full_prefill' });
    return { choice, jobId: profile.jobId, frontier: profile.frontier };
  }
}
