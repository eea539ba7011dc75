import { mean, median, SERVING_SYSTEMS, type ServingSystem } from '@mnemo/kv-core';
import type { RunSummary } from '../../report/run.summary.js';
import type { LivePassFigures, LiveRun } from './live-run.js';

/** A kv-core serving system by the name a results file gives it (undefined: not one of them). */
export const servingSystem = (name: string): ServingSystem | undefined =>
  (SERVING_SYSTEMS as Readonly<Record<string, ServingSystem>>)[name];

export const round = (x: number | null | undefined, d = 3): number | null =>
  x === null || x === undefined || !Number.isFinite(x) ? null : Math.round(x * 10 ** d) / 10 ** d;

/** One configuration the live run has per-pass figures for, as the twin runs it. */
export interface LiveConfiguration {
  readonly name: string;
  readonly system: ServingSystem;
  readonly variant: { readonly missed: number; readonly spurious: number };
  readonly nodeEnv: Readonly<Record<string, string>>;
}

/** The systems and variants the live run has per-pass figures for, with how each is configured. */
export function configurations(mr: LiveRun): LiveConfiguration[] {
  const names = [...new Set(mr.passes.flatMap((p) => Object.keys(p)))];
  return names.map((name) => {
    const described = mr.cluster?.systems?.[name];
    const base = servingSystem(name) ?? (name.startsWith('symphony') ? SERVING_SYSTEMS.symphony : undefined);
    if (!base) throw new Error(`validate: the live run names a system the twin does not know: ${name}`);
    return {
      name,
      // A labelled A/B (bench --advisories-ab) runs symphony with its users silent: the twin's users are too.
      system: typeof described?.advisories === 'boolean' ? { ...base, advisories: described.advisories } : base,
      variant: { missed: described?.missed ?? 0, spurious: described?.spurious ?? 0 },
      nodeEnv: described?.node_env ?? {},
    };
  });
}

/** Live per-pass figures of one configuration. */
export interface LiveFigures {
  readonly passes: Array<{
    ttft_p50_ms: number;
    ttft_p99_ms: number;
    requests?: number;
    tpot_p50_ms?: number;
    load_average?: LivePassFigures['load_average'];
  }>;
  readonly ttft_p50_mean_ms: number;
  readonly ttft_p99_mean_ms: number;
  readonly ttft_p50_range_ms: [number, number];
  readonly ttft_p99_range_ms: [number, number];
}

export function live(mr: LiveRun, name: string): LiveFigures {
  const passes = mr.passes.map((p) => p[name]).filter((p): p is LivePassFigures => p !== undefined);
  const p50 = passes.map((p) => p.ttft_p50_ms);
  const p99 = passes.map((p) => p.ttft_p99_ms);
  return {
    passes: passes.map((p) => ({
      ttft_p50_ms: p.ttft_p50_ms,
      ttft_p99_ms: p.ttft_p99_ms,
      requests: p.requests,
      tpot_p50_ms: p.tpot_p50_ms,
      ...(p.load_average ? { load_average: p.load_average } : {}),
    })),
    ttft_p50_mean_ms: round(mean(p50), 2)!,
    ttft_p99_mean_ms: round(mean(p99), 2)!,
    ttft_p50_range_ms: [Math.min(...p50), Math.max(...p50)],
    ttft_p99_range_ms: [Math.min(...p99), Math.max(...p99)],
  };
}

type Paired = { live: number | null; twin: number | null };

/**
 * The mechanisms behind the TTFTs, live (every pass pooled) beside the twin (median over seeds):
 * where the two differ in latency, these say whether the same KV was found in the same places.
 */
export function mechanisms(mr: LiveRun, name: string, runs: readonly RunSummary[]): Record<string, unknown> {
  const l = mr.policies?.[name] ?? mr.extras?.[name] ?? mr.variants?.[name];
  // The live summary pools every pass: counts per pass.
  const n = mr.passes.filter((p) => p[name]).length;
  const perPass = (x: number | undefined) => (typeof x === 'number' ? round(x / n, 1) : null);
  const share = (counts: Readonly<Record<string, number>> | undefined) => {
    const total = Object.values(counts ?? {}).reduce((a, b) => a + b, 0);
    return total > 0 ? Object.fromEntries(Object.entries(counts!).map(([k, v]) => [k, round(v / total)])) : {};
  };
  const med = (f: (r: RunSummary) => number | null) => round(median(runs.map(f)));
  return {
    requests: { live: perPass(l?.requests), twin: med((r) => r.requests) },
    prefix_hit_rate: { live: l?.prefix_hit_rate ?? null, twin: med((r) => r.prefix_hit_rate) },
    restored_from_peers_tokens: { live: perPass(l?.restored_tokens?.from_peers), twin: med((r) => r.restored_tokens.from_peers) },
    restored_from_local_tiers_tokens: {
      live: perPass(l?.restored_tokens?.from_local_tiers),
      twin: med((r) => r.restored_tokens.from_local_tiers),
    },
    tpot_p50_ms: { live: l?.tpot_p50_ms ?? null, twin: med((r) => r.tpot_p50_ms) },
    routing_share: { live: share(l?.routing), twin: share(runs[0]?.routing) },
    // TTFT p50 of a session's first turns, of turns served where the previous one was and of turns moved to
    // another node (their KV comes from a peer or a prefetch).
    by_move_ttft_p50_ms: Object.fromEntries(
      (['first', 'stayed', 'moved'] as const).map((k): [string, Paired] => [
        k,
        { live: l?.by_move?.[k]?.ttft_p50_ms ?? null, twin: med((r) => r.by_move?.[k]?.ttft_p50_ms ?? null) },
      ]),
    ),
    // Where TTFT goes: queued on the node, arrival there to the first token, and the path outside the nodes
    // (live: mean over passes that recorded it).
    time_on_node: Object.fromEntries(
      (['queue_mean_ms', 'ttft_mean_ms', 'outside_nodes_mean_ms'] as const).map((k): [string, Paired] => {
        const xs = mr.passes.map((p) => p[name]?.time_on_node?.[k]).filter((x): x is number => typeof x === 'number');
        return [k, { live: xs.length ? round(mean(xs), 2) : null, twin: med((r) => r.time_on_node?.[k] ?? null) }];
      }),
    ),
  };
}
