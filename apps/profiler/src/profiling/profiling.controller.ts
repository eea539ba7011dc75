import { Body, Controller, Get, HttpCode, Inject, Param, Post, Res } from '@nestjs/common';
import type { Response } from 'express';
import type { ProfilingLimits } from './start-profiling-job.command.js';
import { StartProfilingJobCommand } from './start-profiling-job.command.js';
import { StartProfilingJobUseCase } from './start-profiling-job.use-case.js';
import { GetProfilingJobUseCase } from './get-profiling-job.use-case.js';
import { GetPairProfileUseCase, type PairProfile } from './get-pair-profile.use-case.js';
import { renderHeatmap } from './heatmap.svg.js';
import { toJobView, type ProfilingJobView } from './profiling-job.view.js';
import { PROFILING_LIMITS } from './profiling.tokens.js';

/**
 * REST entry points of profiling. A pair is addressed by its two model ids as path
 * segments (`/pairs/{base}/{derived}/…`, URL-encoded): pairs have no id of their own.
 */
@Controller('v1/profiler')
export class ProfilingController {
  constructor(
    @Inject(StartProfilingJobUseCase) private readonly start: StartProfilingJobUseCase,
    @Inject(GetProfilingJobUseCase) private readonly getJob: GetProfilingJobUseCase,
    @Inject(GetPairProfileUseCase) private readonly profiles: GetPairProfileUseCase,
    @Inject(PROFILING_LIMITS) private readonly limits: ProfilingLimits,
  ) {}

  @Post('jobs')
  @HttpCode(202)
  async startJob(@Body() body: unknown): Promise<ProfilingJobView> {
    const job = await this.start.execute(StartProfilingJobCommand.from(body, this.limits));
    return toJobView(job, Date.now());
  }

  @Get('jobs/:id')
  job(@Param('id') id: string): Promise<ProfilingJobView> {
    return this.getJob.execute(id);
  }

  @Get('pairs/:base/:derived/frontier')
  frontier(@Param('base') base: string, @Param('derived') derived: string): Promise<PairProfile> {
    return this.profiles.frontier(base, derived);
  }

  @Get('pairs/:base/:derived/heatmap.svg')
  async heatmap(@Param('base') base: string, @Param('derived') derived: string, @Res() res: Response): Promise<void> {
    const { profile, patterns } = await this.profiles.patterns(base, derived);
    res.type('image/svg+xml').send(renderHeatmap(`${base} → ${derived}`, profile.layers, patterns, profile.frontier));
  }
}
