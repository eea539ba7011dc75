import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { ApiKeyAuthenticator } from './api-key.authenticator.js';

/** Request property the guard fills; read it with `tenantOf(req)`. */
const TENANT = Symbol('tenant');
type AuthedRequest = Request & { [TENANT]?: string };

/** Guards the `/v1` routes; ops endpoints (/healthz, /readyz, /metrics) stay open. */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(@Inject(ApiKeyAuthenticator) private readonly auth: ApiKeyAuthenticator) {}

  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<AuthedRequest>();
    req[TENANT] = this.auth.authenticate(req.headers.authorization);
    return true;
  }
}

export function requestTenant(req: Request): string {
  const t = (req as AuthedRequest)[TENANT];
  if (t === undefined) throw new Error('ApiKeyGuard did not run for this route');
  return t;
}
