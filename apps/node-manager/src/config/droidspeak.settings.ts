import { QUALITY_METRICS, type QualityMetric } from '@mnemo/kv-core';
import type { ConfigOf } from '@mnemo/service-kit';
import type { droidSpeakSchema } from './droidspeak.schema.js';

/** NODE_DROIDSPEAK_* parsed: whether and how a derived model's request reuses its base's KV. */
export interface DroidSpeakSettings {
  readonly enabled: boolean;
  /** Quality floor of a plan, as the largest acceptable loss (0.01 = 1% top-1 disagreement). */
  readonly maxQualityLoss: number;
  /**
   * Latency budget from admission (a TTFT SLO) handed to the plan choice, the request's wait charged against it; undefined: the cheapest
   * plan within the floor.
   */
  readonly latencyBudgetMs?: number;
  readonly planTimeoutMs: number;
  /** Whether base models' E caches are kept (in the KV tiers) and fetched from peers. */
  readonly eCaches: boolean;
  /** derived model → its base, for the served models only. */
  readonly bases: ReadonlyMap<string, string>;
  /** derived model → the metric its pair's floor holds on, where an operator chose one (default `top1`). */
  readonly qualityMetrics: ReadonlyMap<string, QualityMetric>;
}

/** The NODE_DROIDSPEAK_* variables as loadConfig reads them. */
export type DroidSpeakEnv = Partial<ConfigOf<typeof droidSpeakSchema>>;

/**
 * The base a model catalog names for a derived model. The catalog is the engine's: it is handed in
 * so that reading the environment needs no engine.
 */
export type CatalogBase = (model: string) => string | undefined;

export const NO_CATALOG: CatalogBase = () => undefined;

/**
 * Bases come from NODE_DROIDSPEAK_BASES (`derived=base`, for model directories) and, for the
 * catalog's derived models, from the catalog; only pairs the node serves both of count.
 */
export function parseDroidSpeakSettings(
  env: DroidSpeakEnv,
  served: readonly string[],
  catalogBase: CatalogBase,
): { settings?: DroidSpeakSettings; problems: string[] } {
  const problems: string[] = [];
  const bases = new Map<string, string>();
  for (const id of served) {
    const base = catalogBase(id);
    if (base && served.includes(base)) bases.set(id, base);
  }
  for (const entry of env.NODE_DROIDSPEAK_BASES ?? []) {
    const [derived, base, ...more] = entry.split('=').map((s) => s.trim());
    if (!derived || !base || more.length > 0) problems.push(`NODE_DROIDSPEAK_BASES entry ${JSON.stringify(entry)}: must be derived=base`);
    else if (derived === base) problems.push(`NODE_DROIDSPEAK_BASES entry ${JSON.stringify(entry)}: a model is not its own base`);
    else if (served.includes(derived) && served.includes(base)) bases.set(derived, base);
  }
  const qualityMetrics = new Map<string, QualityMetric>();
  for (const entry of env.NODE_DROIDSPEAK_QUALITY_METRICS ?? []) {
    const [derived, metric, ...more] = entry.split('=').map((s) => s.trim());
    if (!derived || !metric || more.length > 0 || !QUALITY_METRICS.includes(metric as QualityMetric))
      problems.push(`NODE_DROIDSPEAK_QUALITY_METRICS entry ${JSON.stringify(entry)}: must be derived=top1 or derived=task`);
    else qualityMetrics.set(derived, metric as QualityMetric);
  }
  if (problems.length > 0) return { problems };
  const budget = env.NODE_DROIDSPEAK_LATENCY_BUDGET_MS ?? 0;
  return {
    problems,
    settings: {
      enabled: (env.NODE_DROIDSPEAK ?? 'on') === 'on',
      maxQualityLoss: (env.NODE_DROIDSPEAK_MAX_LOSS_BP ?? 100) / 10_000,
      ...(budget > 0 ? { latencyBudgetMs: budget } : {}),
      planTimeoutMs: env.NODE_DROIDSPEAK_PLAN_TIMEOUT_MS ?? 2000,
      eCaches: (env.NODE_DROIDSPEAK_E_CACHE ?? 'on') === 'on',
      bases,
      qualityMetrics,
    },
  };
}
