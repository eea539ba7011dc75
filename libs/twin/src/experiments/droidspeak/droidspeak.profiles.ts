// The profiles DroidSpeak's twin experiment plans with: the ones the reference engine measured on
// the trained pairs (bench/results/droidspeak.json, `npm run bench -- droidspeak`, which the caller
// reads), never invented. Each pair's stored frontier (profile quality: top-1 agreement on the
// profiling split) is carried from the small model's depth to the target's by the fraction of
// layers (mapPattern); where the held-out test measured the same pattern, its loss is kept beside
// it for the report.
import type { ProfiledPattern, ReusePattern } from '@mnemo/kv-core';
import type { RooflineCompute } from '../../costs/roofline.compute.js';
import type { TransferLink } from '../../costs/transfer.port.js';
import { eCacheBytesPerToken, mapPattern, planCost } from '../../droidspeak/reuse-plan.cost.js';

/** A frontier point as the bench stores it: the pattern as 'r1-u1-r2'. */
export interface StoredFrontierPoint {
  readonly pattern: string;
  readonly quality: number;
  readonly task_loss?: number;
}

/** A trained pair of the bench's results, the fields read here. */
export interface StoredTrainedPair {
  /** Older results name a pair by its derived model alone. */
  readonly name?: string;
  readonly derived: string;
  readonly base: string;
  /** The pair's kind in the paper's terms; 'trained' in older results (a base → full fine-tune pair). */
  readonly kind: string;
  readonly layers: number;
  readonly frontier: readonly StoredFrontierPoint[];
  /** The task-loss frontier (older results: none). */
  readonly task_frontier?: readonly StoredFrontierPoint[];
  /** The held-out test of each pattern. */
  readonly curve?: readonly { readonly pattern: string; readonly test_loss: number | null }[];
}

/** A planted (constructed) pair of the bench's results, the fields read here. */
export interface StoredPlantedPair {
  readonly derived: string;
  readonly base: string;
  readonly layers: number;
  readonly full_reuse_quality_loss: number;
  readonly quality_loss: number;
  readonly chosen_pattern?: ReusePattern | null;
}

/** bench/results/droidspeak.json, the fields read here. */
export interface DroidspeakProfiles {
  readonly pairs: readonly StoredTrainedPair[] | Readonly<Record<string, StoredTrainedPair>>;
  readonly planted?: { readonly pairs?: readonly StoredPlantedPair[] };
}

/** A profiled pattern in the profiled model's layers, with its profile quality and, when measured, its held-out loss. */
export interface ProfiledPoint {
  readonly key: string;
  readonly pattern: ReusePattern;
  readonly quality: number;
  /** Task loss on the profiling split, where the profile measured it. */
  readonly taskLoss?: number;
  readonly testLoss: number | null;
}

export interface ProfiledPair {
  readonly name: string;
  readonly base: string;
  readonly kind: 'trained' | 'constructed';
  /** The pair's kind in the DroidSpeak paper's terms (trained pairs): base_full_ft, full_ft_pair, base_lora, lora_pair. */
  readonly pairKind?: string;
  readonly layers: number;
  readonly points: readonly ProfiledPoint[];
}

/** A frontier point on the target as kv-core's plan choice takes it, and the profiled point it came from. */
export interface TargetPoint extends ProfiledPattern {
  readonly source: ProfiledPoint;
}

const parse = (key: string): ReusePattern => {
  const [r1, u1, r2] = key.split('-').map(Number) as [number, number, number];
  return { r1, u1, r2 };
};

/**
 * Every pair of the bench's results as {name, kind, layers, points}: a point is a profiled pattern
 * in the profiled model's layers with its profile quality and, when measured, its held-out loss.
 * Trained pairs carry their whole stored frontier. The planted pairs (constructed: two layers'
 * attention rotated) stored only three measured points — full reuse, the chosen plan, full
 * prefill — each at its held-out quality; they are kept, labelled, as a test of the mechanism.
 */
export function profiledPairs(results: DroidspeakProfiles): ProfiledPair[] {
  // An array, or a record by name: its values in order either way.
  const all: readonly StoredTrainedPair[] = Object.values(results.pairs);
  const trained = all.map((p): ProfiledPair => {
    const test = new Map((p.curve ?? []).map((c) => [c.pattern, c.test_loss]));
    // Both metrics' frontiers (older results: the top-1 frontier alone), each point once.
    const points = new Map([...p.frontier, ...(p.task_frontier ?? [])].map((f) => [f.pattern, f]));
    return {
      name: p.name ?? p.derived,
      base: p.base,
      kind: 'trained',
      pairKind: p.kind === 'trained' ? 'base_full_ft' : p.kind,
      layers: p.layers,
      points: [...points.values()].map((f) => ({
        key: f.pattern,
        pattern: parse(f.pattern),
        quality: f.quality,
        ...(f.task_loss !== undefined ? { taskLoss: f.task_loss } : {}),
        testLoss: test.get(f.pattern) ?? null,
      })),
    };
  });
  const planted = (results.planted?.pairs ?? []).map((p): ProfiledPair => ({
    name: p.derived,
    base: p.base,
    kind: 'constructed',
    layers: p.layers,
    points: [
      { key: '0-0-0', pattern: { r1: 0, u1: 0, r2: 0 }, quality: 1 - p.full_reuse_quality_loss, testLoss: p.full_reuse_quality_loss },
      ...(p.chosen_pattern
        ? [
            {
              key: `${p.chosen_pattern.r1}-${p.chosen_pattern.u1}-${p.chosen_pattern.r2}`,
              pattern: p.chosen_pattern,
              quality: 1 - p.quality_loss,
              testLoss: p.quality_loss,
            },
          ]
        : []),
      { key: `0-0-${p.layers}`, pattern: { r1: 0, u1: 0, r2: p.layers }, quality: 1, testLoss: 0 },
    ],
  }));
  return [...trained, ...planted];
}

/**
 * A pair's frontier as kv-core's plan choice takes it, on the target: patterns mapped to the
 * target's layers, each priced (fetch + compute) at `context` tokens the way the live profiler's
 * `prefillMs` is its measured time at the profiling length. The stored frontier has no KL: 0.
 */
export function targetFrontier(
  pair: Pick<ProfiledPair, 'layers' | 'points'>,
  compute: RooflineCompute,
  link: TransferLink,
  context: number,
  question: number,
): TargetPoint[] {
  const L = compute.model.layers;
  return pair.points.map((pt) => {
    const pattern = mapPattern(pt.pattern, pair.layers, L);
    const c = planCost(compute, link, pattern, context, question);
    return {
      pattern,
      quality: pt.quality,
      ...(pt.taskLoss !== undefined ? { taskLoss: pt.taskLoss } : {}),
      meanKl: 0,
      recomputedLayers: c.recomputed,
      eCacheBytesPerToken: pattern.r1 < pattern.u1 && pattern.u1 < L ? eCacheBytesPerToken(compute.model) : 0,
      prefillMs: c.fetchMs + c.computeMs,
      source: pt,
    };
  });
}
