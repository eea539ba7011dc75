import { createHash } from 'node:crypto';

/**
 * The tenant id of an API key: a hash of the key. It becomes the chunk-key salt, so two keys never
 * share cached prefixes, and the key itself never travels past the service that checked it.
 * The gateway and the scheduler's indexer derive it alike, so a key scopes both to one tenant.
 */
export function tenantOf(key: string): string {
  return 't-' + createHash('sha256').update('mnemo-tenant\0').update(key).digest('hex').slice(0, 32);
}

/**
 * What a log line shows of a tenant id: a short one-way digest, enough to tell lines of one
 * tenant from another's, not enough to recompute the chunk-key salt (which the id is) or to
 * tell an operator reading logs which key was used.
 */
export function tenantLogId(tenant: string): string {
  return 'th-' + createHash('sha256').update('mnemo-tenant-log\0').update(tenant).digest('hex').slice(0, 12);
}
