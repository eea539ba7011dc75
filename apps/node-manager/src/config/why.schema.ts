import type { Schema } from '@mnemo/service-kit';

/** Why a prompt hit or missed: the records a node keeps for `mnemo why`. */
export const whySchema = {
  NODE_WHY_RECORDS: {
    type: 'int',
    doc: 'requests whose KV record (where each prompt chunk came from) is kept for `why`; the oldest go first',
    default: 10_000,
    min: 1,
  },
  NODE_WHY_TTL_MS: {
    type: 'int',
    doc: "how long a request record and a dropped chunk's reason are kept for `why`",
    default: 3_600_000,
    min: 1000,
  },
  NODE_WHY_DROPS: {
    type: 'int',
    doc: 'dropped chunk keys whose reason (evicted, expired, corrupt) is kept for `why`',
    default: 200_000,
    min: 1,
  },
} as const satisfies Schema;
