// The profiles DroidSpeak's twin experiment plans with: the ones the reference engine measured on
// the trained pairs (bench/results/droidspeak.json, `npm run bench -- droidspeak`), never invented.
// Each pair's stored frontier (profile quality: top-1 agreement on the profiling split) is carried
// from the small model's depth to the target's by the fraction of layers (libs/twin mapPattern);
// where the held-out test measured the same pattern, its loss is kept beside it for the report.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eCacheBytesPerToken, mapPattern, planCost } from '@mnemo/twin';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
export const PROFILE_FILE = 'bench/results/droidspeak.json';

export function readProfiles(path = join(root, PROFILE_FILE)) {
  return JSON.parse(readFileSync(path, 'utf8'));
}

const parse = (key) => {
  const [r1, u1, r2] = key.split('-').map(Number);
  return { r1, u1, r2 };
};

/**
 * Every pair of the bench's results as {name, kind, layers, points}: a point is a profiled pattern
 * in the profiled model's layers with its profile quality and, when measured, its held-out loss.
 * Trained pairs carry their whole stored frontier. The planted pairs (constructed: two layers'
 * attention rotated) stored only three measured points — full reuse, the chosen plan, full
 * prefill — each at its held-out quality; they are kept, labelled, as a test of the mechanism.
 */
export function profiledPairs(results) {
  const all = Array.isArray(results.pairs) ? results.pairs : Object.values(results.pairs);
  const trained = all.map((p) => {
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
  const planted = (results.planted?.pairs ?? []).map((p) => ({
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
export function targetFrontier(pair, compute, link, context, question) {
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
