import { Body, Controller, Inject, Post, Req, Res, UseGuards } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ApiKeyGuard } from '../auth/api-key.guard.js';
import { parseChatRequest } from './chat-request.parser.js';
import { CompletionEndpoint, type CompletionRoute } from './completion.endpoint.js';
import { parseCompletionRequest } from './completion-request.parser.js';
import { chatFormat, textFormat } from './openai.formats.js';

const chat: CompletionRoute = { operation: 'chat.completions', parse: parseChatRequest, format: chatFormat, idPrefix: 'chatcmpl' };
const text: CompletionRoute = { operation: 'completions', parse: parseCompletionRequest, format: textFormat, idPrefix: 'cmpl' };

/** `POST /v1/chat/completions` and the legacy `POST /v1/completions` (prompt in, text out): one endpoint, two routes. */
@Controller('v1')
@UseGuards(ApiKeyGuard)
export class CompletionsController {
  constructor(@Inject(CompletionEndpoint) private readonly endpoint: CompletionEndpoint) {}

  @Post('chat/completions')
  chat(@Req() req: Request, @Res() res: Response, @Body() body: unknown): Promise<void> {
    return this.endpoint.serve(chat, req, res, body);
  }

  @Post('completions')
  complete(@Req() req: Request, @Res() res: Response, @Body() body: unknown): Promise<void> {
    return this.endpoint.serve(text, req, res, body);
  }
}
