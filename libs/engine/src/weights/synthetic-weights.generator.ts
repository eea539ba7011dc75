import type { ModelConfig } from '../model/model-config.js';
import { findSyntheticModel, type SyntheticModelSpec } from '../model/model.catalog.js';
import { expectedTensors, type HostTensor, type ModelWeights, type TensorSpec } from './model-weights.js';
import { rotateHeadBases } from './head-basis.rotation.js';
import { SeededPrng, streamSeed } from './seeded.prng.js';

/**
 * Init std per tensor kind, chosen so activations stay O(1) through any depth:
 * linear N(0, 1/sqrt(fan_in)) keeps projections at the input's scale, norm gains sit
 * near 1 (with a little spread so a wrong norm weight shows up in tests).
 */
function initStd(spec: TensorSpec, c: ModelConfig): number {
  switch (spec.kind) {
    case 'linear':
      return 1 / Math.sqrt(spec.shape[1]);
    case 'embedding':
      // A tied table is also the lm head, so it gets the head's scale.
      return c.tieEmbeddings ? 1 / Math.sqrt(c.dModel) : 1;
    case 'norm':
      return 0.1;
    case 'bias':
      return 0.1;
  }
}

/** Fills `out` with N(mean, std) from the stream of (seed, name): same values on every run. */
export function fillNormal(out: Float32Array, seed: number, name: string, std: number, mean = 0): Float32Array {
  const rng = new SeededPrng(streamSeed(seed, name));
  for (let i = 0; i < out.length; i++) out[i] = mean + std * rng.nextNormal();
  return out;
}

function generateTensor(spec: TensorSpec, c: ModelConfig, seed: number): HostTensor {
  const n = spec.shape.reduce((a, b) => a * b, 1);
  const mean = spec.kind === 'norm' ? 1 : 0;
  return { shape: spec.shape, data: fillNormal(new Float32Array(n), seed, spec.name, initStd(spec, c), mean) };
}

/** Adds the derived model's seeded noise to one tensor in place. */
function perturb(t: HostTensor, spec: TensorSpec, c: ModelConfig, seed: number, scale: number): void {
  const rng = new SeededPrng(streamSeed(seed, `perturb:${spec.name}`));
  const std = scale * initStd(spec, c);
  for (let i = 0; i < t.data.length; i++) t.data[i] += std * rng.nextNormal();
}

/** Weights of a catalog model (base or derived), deterministic from its seeds. */
export function generateSyntheticWeights(spec: SyntheticModelSpec): ModelWeights {
  const c = spec.config;
  const d = spec.derivedFrom;
  if (d) {
    const base = findSyntheticModel(d.base);
    if (!base) throw new Error(`derived model ${c.id}: unknown base ${d.base}`);
    for (const l of d.layers) {
      if (!Number.isInteger(l) || l < 0 || l >= c.layers) throw new Error(`derived model ${c.id}: layer ${l} out of range`);
    }
  }
  const perturbed = new Set(d?.layers ?? []);
  const tensors = new Map<string, HostTensor>();
  for (const t of expectedTensors(c)) {
    const host = generateTensor(t, c, spec.seed);
    if (d && perturbed.has(t.layer)) perturb(host, t, c, d.seed, d.scale);
    tensors.set(t.name, host);
  }
  if (d?.rotateHeads) for (const l of d.layers) rotateHeadBases(tensors, c, l, d.seed);
  return { config: c, tensors };
}

/** Catalog lookup plus generation; throws on an unknown id. */
export function syntheticWeightsFor(modelId: string): ModelWeights {
  const spec = findSyntheticModel(modelId);
  if (!spec) throw new Error(`unknown synthetic model ${modelId}`);
  return generateSyntheticWeights(spec);
}
