import { isSyntheticModel } from '../model/model.catalog.js';
import { isHfModelDir, loadHfModel } from '../weights/hf-model.loader.js';
import { isLoraAdapterDir, loadLoraMerged } from '../weights/lora-adapter.loader.js';
import type { ModelWeights } from '../weights/model-weights.js';
import { syntheticWeightsFor } from '../weights/synthetic-weights.generator.js';

/** A catalog id, a Hugging Face directory, a LoRA adapter directory (merged into its base), or weights in memory → weights in memory. */
export function resolveWeights(m: string | ModelWeights): ModelWeights {
  if (typeof m !== 'string') return m;
  if (isSyntheticModel(m)) return syntheticWeightsFor(m);
  if (isHfModelDir(m)) return loadHfModel(m);
  if (isLoraAdapterDir(m)) return loadLoraMerged(m);
  throw new Error(
    `model ${m}: not a catalog id, a model directory (config.json + safetensors) ` +
      'or a LoRA adapter directory (adapter_config.json + adapter_model.safetensors)',
  );
}
