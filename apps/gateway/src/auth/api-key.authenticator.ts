import { createHash, timingSafeEqual } from 'node:crypto';
import { ErrorCode, MnemoError, tenantOf } from '@mnemo/kv-core';

export { tenantOf };

/** Tenant of every request when authentication is off. */
export const DEFAULT_TENANT = 'default';

/**
 * Resolves the `Authorization` header to a tenant. The tenant id is a hash of the key:
 * it becomes the chunk-key salt, so two keys never share cached prefixes (the prefix-cache
 * timing side channel), and the key itself never travels past the gateway.
 */
export class ApiKeyAuthenticator {
  private readonly digests: readonly Buffer[];

  constructor(keys: readonly string[]) {
    this.digests = keys.map(digest);
  }

  get enabled(): boolean {
    return this.digests.length > 0;
  }

  /** Returns the tenant, or throws `unauthenticated`. */
  authenticate(authorization: string | undefined): string {
    if (!this.enabled) return DEFAULT_TENANT;
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (!m) throw new MnemoError(ErrorCode.Unauthenticated, 'missing API key: send "Authorization: Bearer <key>"');
    const presented = digest(m[1]!);
    // Compare digests (fixed length) against every key without stopping early, so timing
    // reveals neither which key nor how much of one matched.
    let match = false;
    for (const d of this.digests) match = timingSafeEqual(d, presented) || match;
    if (!match) throw new MnemoError(ErrorCode.Unauthenticated, 'invalid API key');
    return tenantOf(m[1]!);
  }
}

function digest(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}
