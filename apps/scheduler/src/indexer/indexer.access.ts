import { createHash, timingSafeEqual } from 'node:crypto';
import { ErrorCode, MnemoError, tenantOf } from '@mnemo/kv-core';

/** Who is asking the indexer: an operator (any tenant, any chunk key) or one tenant's key (its own prefixes only). */
export type IndexerCaller = { readonly admin: true } | { readonly admin: false; readonly tenant: string };

/**
 * The indexer API's access check. It tells which prompts are cached, and a cached prefix is what
 * the prefix-cache timing side channel leaks, so nothing is answered without a key: an admin key
 * (SCHEDULER_INDEXER_ADMIN_KEYS), or a gateway API key (MNEMO_API_KEYS), whose tenant is the hash
 * of the key exactly as the gateway derives it. The scope is the key's; a body naming another
 * tenant is refused, not obeyed.
 */
export class IndexerAccess {
  private readonly admins: readonly Buffer[];
  private readonly tenants: readonly Buffer[];

  constructor(adminKeys: readonly string[], apiKeys: readonly string[]) {
    this.admins = adminKeys.map(digest);
    this.tenants = apiKeys.map(digest);
  }

  /** The caller of an `Authorization` header, or throws `unauthenticated` (401). */
  caller(authorization: string | undefined): IndexerCaller {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (!m) throw new MnemoError(ErrorCode.Unauthenticated, 'the indexer API needs a key: send "Authorization: Bearer <key>"');
    const presented = digest(m[1]!);
    // Every digest compared, none skipped: timing tells neither which list nor which key matched.
    let admin = false;
    let tenant = false;
    for (const d of this.admins) admin = timingSafeEqual(d, presented) || admin;
    for (const d of this.tenants) tenant = timingSafeEqual(d, presented) || tenant;
    if (admin) return { admin: true };
    if (tenant) return { admin: false, tenant: tenantOf(m[1]!) };
    throw new MnemoError(ErrorCode.Unauthenticated, 'invalid indexer key');
  }

  /** The tenant a `/query` is answered for: an admin's choice (default `fallback`), else the key's own. */
  static scope(caller: IndexerCaller, requested: string | undefined, fallback: string): string {
    if (caller.admin) return requested ?? fallback;
    if (requested !== undefined && requested !== caller.tenant)
      throw new MnemoError(
        ErrorCode.PermissionDenied,
        "tenant: a tenant key queries its own tenant only; another tenant's needs an admin key",
        {
          param: 'tenant',
        },
      );
    return caller.tenant;
  }
}

function digest(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}
