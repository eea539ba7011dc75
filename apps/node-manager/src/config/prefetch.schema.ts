import type { Schema } from '@mnemo/service-kit';

/** Advisory prefetch: how long and how much a node stages for sessions announced ahead. */
export const prefetchSchema = {
  NODE_PREFETCH_TTL_MS: {
    type: 'int',
    doc: 'advisory prefetch: how long prefetched chunks are held for an advisory that names no expiry (and at most 10× this)',
    default: 60_000,
    min: 100,
  },
  NODE_PREFETCH_PROMOTE: {
    type: 'enum',
    doc:
      'advisory prefetch: on — a prefetched chunk also goes to the device while it has free blocks (never evicting ' +
      'for it), so its request finds a device hit; off — it waits in the host pool and the request restores it',
    values: ['on', 'off'],
    default: 'on',
  },
  NODE_PREFETCH_MAX_ADVISORIES: {
    type: 'int',
    doc: 'advisory prefetch: advisories held at once; more are refused as overloaded (a flood cannot starve real work)',
    default: 1024,
    min: 1,
  },
} as const satisfies Schema;
