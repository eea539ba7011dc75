import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { ApiKeyAuthenticator } from './api-key.authenticator.js';

/** Request property the guard fills; read it with `tenantOf(req)`. */
const TENANT = Symbol('tenant');
type AuthedRequest = Request & { [TENANT]?: string };

/**
 * Guards the `/v1` routes. Ops endpoints (/healthz, /readyz, /metrics) are not on this port: the gateway serves them on its ops port
 * (METRICS_PORT).
 */
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
