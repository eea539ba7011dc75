import { Body, Controller, Inject, Post, Req, Res, UseGuards } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ApiKeyGuard } from '../auth/api-key.guard.js';
import { parseChatRequest } from './chat-request.parser.js';
import { CompletionEndpoint, type CompletionRoute } from './completion.endpoint.js';
import { chatFormat } from './openai.formats.js';

const route: CompletionRoute = { operation: 'chat.completions', parse: parseChatRequest, format: chatFormat, idPrefix: 'chatcmpl' };

@Controller('v1/chat')
@UseGuards(ApiKeyGuard)
export class ChatCompletionsController {
  constructor(@Inject(CompletionEndpoint) private readonly endpoint: CompletionEndpoint) {}

  @Post('completions')
  create(@Req() req: Request, @Res() res: Response, @Body() body: unknown): Promise<void> {
    return this.endpoint.serve(route, req, res, body);
  }
}
