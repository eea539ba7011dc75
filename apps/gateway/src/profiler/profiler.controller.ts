import { Body, Controller, Get, Inject, Param, Post, Res, UseGuards } from '@nestjs/common';
import type { Response } from 'express';
import { ApiKeyGuard } from '../auth/api-key.guard.js';
import { ProfilerClient, type ProfilerAnswer } from './profiler.client.js';
import { parseJobBody, parseJobId, parseModelId } from './profiler-request.validators.js';

/**
 * `/v1/profiler/…` on the gateway: the profiler's REST API (docs/droidspeak.md), proxied. Input is
 * checked here first (400), then passed on; answers go back with the profiler's status and type.
 */
@Controller('v1/profiler')
@UseGuards(ApiKeyGuard)
export class ProfilerController {
  constructor(@Inject(ProfilerClient) private readonly profiler: ProfilerClient) {}

  @Post('jobs')
  async startJob(@Body() body: unknown, @Res() res: Response): Promise<void> {
    relay(res, await this.profiler.send('POST', '/v1/profiler/jobs', parseJobBody(body)));
  }

  @Get('jobs/:id')
  async job(@Param('id') id: string, @Res() res: Response): Promise<void> {
    relay(res, await this.profiler.send('GET', `/v1/profiler/jobs/${parseJobId(id)}`));
  }

  @Get('pairs/:base/:derived/frontier')
  async frontier(@Param('base') base: string, @Param('derived') derived: string, @Res() res: Response): Promise<void> {
    relay(res, await this.profiler.send('GET', `${pairPath(base, derived)}/frontier`));
  }

  @Get('pairs/:base/:derived/heatmap.svg')
  async heatmap(@Param('base') base: string, @Param('derived') derived: string, @Res() res: Response): Promise<void> {
    relay(res, await this.profiler.send('GET', `${pairPath(base, derived)}/heatmap.svg`));
  }
}

/** Express decoded the ids; they are encoded again so a `/` in a model id stays one segment. */
function pairPath(base: string, derived: string): string {
  return `/v1/profiler/pairs/${encodeURIComponent(parseModelId(base, 'base'))}/${encodeURIComponent(parseModelId(derived, 'derived'))}`;
}

function relay(res: Response, a: ProfilerAnswer): void {
  res.status(a.status).type(a.contentType).send(a.body);
}
