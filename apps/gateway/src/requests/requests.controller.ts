import { Controller, Get, Inject, Param, Req, Res, UseGuards } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AdminKeyCheck } from '../auth/admin-key.check.js';
import { ApiKeyGuard, requestTenant } from '../auth/api-key.guard.js';
import { malformedRequestId, RequestKvUseCase, requestIdOf, type RequestKvView } from './request-kv.use-case.js';

/** `GET /v1/requests/{id}/kv`: where each chunk of a request's prompt came from, or why it missed. */
@Controller('v1/requests')
@UseGuards(ApiKeyGuard)
export class RequestsController {
  constructor(
    @Inject(RequestKvUseCase) private readonly useCase: RequestKvUseCase,
    @Inject(AdminKeyCheck) private readonly admin: AdminKeyCheck,
  ) {}

  @Get(':id/kv')
  async kv(@Req() req: Request, @Res({ passthrough: true }) res: Response, @Param('id') id: string): Promise<RequestKvView> {
    res.setHeader('X-Request-Id', requestIdOf(id));
    return this.useCase.execute(requestTenant(req), id, this.admin.isAdmin(req.headers['x-admin-key']));
  }

  /** Any other path under /v1/requests — an id with a slash, a missing id — is a malformed id: 400, as above. */
  @Get('*rest')
  malformed(): never {
    throw malformedRequestId();
  }
}
