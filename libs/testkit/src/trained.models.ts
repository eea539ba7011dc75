/**
 * The models tools/train trained and the repo ships, the default first: full models, then LoRA
 * adapters of fortune-base (the engine loads them merged into it). `npm start` and the Kubernetes
 * manifests serve the same list.
 */
export const TRAINED_MODELS: readonly string[] = [
  'fortune-base',
  'fortune-computers',
  'fortune-songs',
  'fortune-lora-computers',
  'fortune-lora-songs',
  'fortune-lora-definitions',
];
