import { Body, Controller, Inject, Post, Req, Res, UseGuards } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ApiKeyGuard } from '../auth/api-key.guard.js';
import { CompletionEndpoint, type CompletionRoute } from './completion.endpoint.js';
import { parseCompletionRequest } from './completion-request.parser.js';
import { textFormat } from './openai.formats.js';

const route: CompletionRoute = { operation: 'completions', parse: parseCompletionRequest, format: textFormat, idPrefix: 'cmpl' };

/** The legacy `POST /v1/completions` (prompt in, text out). */
@Controller('v1')
@UseGuards(ApiKeyGuard)
export class CompletionsController {
  constructor(@Inject(CompletionEndpoint) private readonly endpoint: CompletionEndpoint) {}

  @Post('completions')
  create(@Req() req: Request, @Res() res: Response, @Body() body: unknown): Promise<void> {
    return this.endpoint.serve(route, req, res, body);
  }
}
