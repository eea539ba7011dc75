import { Body, Controller, Delete, HttpCode, Inject, Param, Post, Req, UseGuards } from '@nestjs/common';
import type { Request } from 'express';
import { ApiKeyGuard, requestTenant } from '../auth/api-key.guard.js';
import { requireObject } from '../completions/request-field.validators.js';
import { parseAdviseBody } from './advise.command.js';
import { AdviseUseCase, type AdvisoryView } from './advise.use-case.js';

/** `POST /v1/advisories` and `DELETE /v1/advisories/{id}` (Symphony advisories). */
@Controller('v1/advisories')
@UseGuards(ApiKeyGuard)
export class AdvisoriesController {
  constructor(@Inject(AdviseUseCase) private readonly advise: AdviseUseCase) {}

  @Post()
  @HttpCode(201)
  create(@Req() req: Request, @Body() body: unknown): Promise<AdvisoryView> {
    return this.advise.execute(parseAdviseBody(requireObject(body, null), requestTenant(req)));
  }

  @Delete(':id')
  remove(@Req() req: Request, @Param('id') id: string): Promise<{ advisory_id: string; deleted: true }> {
    return this.advise.invalidate(requestTenant(req), id);
  }
}
