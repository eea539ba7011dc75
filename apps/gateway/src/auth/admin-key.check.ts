import { createHash, timingSafeEqual } from 'node:crypto';

/** Admin keys (MNEMO_ADMIN_KEYS): whether a presented `x-admin-key` is one, compared in constant time. */
export class AdminKeyCheck {
  private readonly digests: readonly Buffer[];

  constructor(keys: readonly string[]) {
    this.digests = keys.map(digest);
  }

  isAdmin(presented: string | string[] | undefined): boolean {
    if (typeof presented !== 'string' || presented.length === 0 || this.digests.length === 0) return false;
    const d = digest(presented);
    let match = false;
    for (const k of this.digests) match = timingSafeEqual(k, d) || match;
    return match;
  }
}

function digest(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}
