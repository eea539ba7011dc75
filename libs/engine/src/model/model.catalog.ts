import { ByteTokenizer } from '../tokenizer/byte-tokenizer.js';
import { validateModelConfig, type ModelConfig } from './model-config.js';

/**
 * How a derived (fine-tuned-like) model differs from its base: seeded noise added to
 * every tensor of the listed layers, nothing else. Layers before the first perturbed
 * one are bit-identical to the base, which is what DroidSpeak reuse tests rely on.
 */
export interface Perturbation {
  readonly base: string;
  readonly layers: readonly number[];
  /** Noise std relative to the tensor's own init std. */
  readonly scale: number;
  readonly seed: number;
  /** Also rotate the attention head bases of these layers (see `rotateHeadBases`): KV differs entirely, function barely. */
  readonly rotateHeads?: boolean;
}

export interface SyntheticModelSpec {
  readonly config: ModelConfig;
  /** Seed of the base weights (a derived model uses its base's seed plus its perturbation). */
  readonly seed: number;
  readonly derivedFrom?: Perturbation;
}

const byteTok = new ByteTokenizer();

/** Noise of the `-ds` derived models, relative to each tensor's init std. */
export const DS_SCALE = 0.01;

type Shape = Pick<ModelConfig, 'layers' | 'dModel' | 'heads' | 'kvHeads' | 'headDim' | 'ffn'> & Partial<ModelConfig>;

function byteModel(id: string, shape: Shape): ModelConfig {
  return validateModelConfig({
    vocab: byteTok.vocabSize,
    ropeTheta: 10000,
    rmsEps: 1e-5,
    maxContext: 4096,
    tieEmbeddings: false,
    qkvBias: false,
    qkNorm: false,
    bosTokenId: byteTok.bosTokenId,
    eosTokenId: byteTok.eosTokenId,
    id,
    ...shape,
  });
}

function family(id: string, shape: Shape, seed: number, perturbed: readonly number[]): SyntheticModelSpec[] {
  const base: SyntheticModelSpec = { config: byteModel(id, shape), seed };
  const ft: SyntheticModelSpec = {
    config: byteModel(`${id}-ft`, shape),
    seed,
    derivedFrom: { base: id, layers: perturbed, scale: 0.05, seed: seed + 1 },
  };
  return [base, ft];
}

/**
 * A derived model whose layers [a, b) have rotated attention head bases plus a little
 * seeded noise: reusing the base's KV there ruins outputs, while the hidden states above
 * b stay close to the base's. Its critical layers are [a, b) by construction, which is
 * what the DroidSpeak profiler tests and benchmark check a profile against.
 */
function perturbedRange(base: SyntheticModelSpec, suffix: string, [a, b]: readonly [number, number], scale: number): SyntheticModelSpec {
  const layers = Array.from({ length: b - a }, (_, i) => a + i);
  return {
    config: { ...base.config, id: `${base.config.id}-${suffix}` },
    seed: base.seed,
    derivedFrom: { base: base.config.id, layers, scale, seed: base.seed + 7, rotateHeads: true },
  };
}

const TINY = family('mnemo-tiny', { layers: 4, dModel: 64, heads: 4, kvHeads: 2, headDim: 16, ffn: 176 }, 1001, [2, 3]);
const SMALL = family('mnemo-small', { layers: 6, dModel: 256, heads: 8, kvHeads: 2, headDim: 32, ffn: 704 }, 2002, [3, 4, 5]);
const MEDIUM = family('mnemo-medium', { layers: 8, dModel: 512, heads: 8, kvHeads: 4, headDim: 64, ffn: 1408 }, 3003, [4, 5, 6, 7]);

/**
 * Named synthetic models. All use the byte vocabulary of `ByteTokenizer` (261 ids), so
 * any text can be served without a tokenizer file. `-ft` ids are derived variants whose
 * upper layers are perturbed (the DroidSpeak base → fine-tune pair).
 */
export const SYNTHETIC_MODELS: readonly SyntheticModelSpec[] = [
  ...TINY,
  ...SMALL,
  ...MEDIUM,
  // DroidSpeak pairs with known critical layers: `<base>-ds<a><b>` perturbs layers [a, b) of its base.
  perturbedRange(SMALL[0]!, 'ds24', [2, 4], DS_SCALE),
  perturbedRange(MEDIUM[0]!, 'ds35', [3, 5], DS_SCALE),
  // Architecture variants, small enough for CPU tests: Qwen2-style q/k/v bias, Qwen3-style q/k norm, tied head.
  {
    config: byteModel('mnemo-tiny-qwen2', {
      layers: 2,
      dModel: 64,
      heads: 4,
      kvHeads: 1,
      headDim: 16,
      ffn: 128,
      qkvBias: true,
      ropeTheta: 1e6,
    }),
    seed: 4004,
  },
  {
    config: byteModel('mnemo-tiny-qwen3', {
      layers: 2,
      dModel: 64,
      heads: 4,
      kvHeads: 2,
      headDim: 32,
      ffn: 128,
      qkNorm: true,
      tieEmbeddings: true,
      rmsEps: 1e-6,
    }),
    seed: 5005,
  },
];

export function findSyntheticModel(id: string): SyntheticModelSpec | undefined {
  return SYNTHETIC_MODELS.find((m) => m.config.id === id);
}

export function isSyntheticModel(id: string): boolean {
  return findSyntheticModel(id) !== undefined;
}
