import { Controller, Delete, Get, Inject, Param, Req, UseGuards } from '@nestjs/common';
import type { Request } from 'express';
import { ApiKeyGuard, requestTenant } from '../auth/api-key.guard.js';
import { SessionUseCase, type SessionDeletionView, type SessionView } from './session.use-case.js';

/** `GET` / `DELETE /v1/sessions/{id}`: what the cluster knows of a session; forgetting it everywhere. */
@Controller('v1/sessions')
@UseGuards(ApiKeyGuard)
export class SessionsController {
  constructor(@Inject(SessionUseCase) private readonly sessions: SessionUseCase) {}

  @Get(':id')
  get(@Req() req: Request, @Param('id') id: string): Promise<SessionView> {
    return this.sessions.get(requestTenant(req), id);
  }

  @Delete(':id')
  remove(@Req() req: Request, @Param('id') id: string): Promise<SessionDeletionView> {
    return this.sessions.delete(requestTenant(req), id);
  }
}
