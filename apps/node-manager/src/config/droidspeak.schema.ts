import type { Schema } from '@mnemo/service-kit';

/** DroidSpeak on the node: cross-model reuse, its plans and E caches. */
export const droidSpeakSchema = {
  NODE_DROIDSPEAK: {
    type: 'enum',
    doc:
      "cross-model KV reuse (DroidSpeak): on — a derived model's request whose prompt its base model holds more of reuses " +
      "the base's KV under the profiler's plan (an approximation, reported in usage.kv_reuse); off — ordinary prefill",
    values: ['on', 'off'],
    default: 'on',
  },
  NODE_DROIDSPEAK_MAX_LOSS_BP: {
    type: 'int',
    doc: 'DroidSpeak: quality floor, the largest top-1 loss a plan may have, in basis points (100 = 1%)',
    default: 100,
    min: 0,
    max: 10_000,
  },
  NODE_DROIDSPEAK_LATENCY_BUDGET_MS: {
    type: 'int',
    doc:
      'DroidSpeak: latency budget from admission (a TTFT SLO) for the plan choice, the ' +
      'wait since admission charged against it (0: the cheapest plan within the floor)',
    default: 0,
    min: 0,
  },
  NODE_DROIDSPEAK_PLAN_TIMEOUT_MS: {
    type: 'int',
    doc: 'DroidSpeak: how long a frontier fetch from the profiler may take (never on the request path)',
    default: 2000,
    min: 10,
  },
  NODE_DROIDSPEAK_E_CACHE: {
    type: 'enum',
    doc:
      "DroidSpeak: on — base models' E caches at their pairs' transition layers are kept in the KV tiers (host " +
      'and SSD pools, shared with the KV) and served to peers; off — none kept (plans needing one run widened)',
    values: ['on', 'off'],
    default: 'on',
  },
  NODE_DROIDSPEAK_BASES: {
    type: 'list',
    doc: "DroidSpeak: extra derived=base pairs (model directories); the synthetic catalog's derived models know their base",
  },
  NODE_DROIDSPEAK_QUALITY_METRICS: {
    type: 'list',
    doc:
      'DroidSpeak: per pair, derived=top1|task, the metric the floor holds on: top1 (default) — 1 − top-1 agreement with the ' +
      "derived model's own prediction; task — the relative increase of its held-out loss on its own domain (docs/droidspeak.md)",
  },
} as const satisfies Schema;
