// Which models `npm start` serves: the default model (MNEMO_DEFAULT_MODEL, checked before anything
// starts) and the trained models found in tools/train/models.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { TRAINED_MODELS } from '@mnemo/testkit';

/** The trained models' directories this checkout has, in TRAINED_MODELS' order. @param {string} root */
export function trainedModelDirs(root) {
  return TRAINED_MODELS.map((m) => join(root, 'tools/train/models', m)).filter(isModelDir);
}

/** A model directory (config.json) or a LoRA adapter directory (adapter_config.json), as the engine loads them. */
function isModelDir(dir) {
  return existsSync(join(dir, 'config.json')) || existsSync(join(dir, 'adapter_config.json'));
}

/**
 * MNEMO_DEFAULT_MODEL (default fortune-base), checked before anything starts: the name of a
 * model directory in tools/train/models, or a synthetic catalog id. `served` is what goes in
 * NODE_MODELS (the directory, or the id); when NODE_MODELS is set it must include it.
 * @param {string} root @param {NodeJS.ProcessEnv} env
 * @returns {Promise<{ id: string, served: string }>}
 */
export async function resolveDefaultModel(root, env) {
  const id = env.MNEMO_DEFAULT_MODEL?.trim() || 'fortune-base';
  const dir = join(root, 'tools/train/models', id);
  const { isSyntheticModel } = await import('../libs/engine/dist/model/model.catalog.js');
  const served = /^[\w.-]+$/.test(id) && isModelDir(dir) ? dir : isSyntheticModel(id) ? id : null;
  if (served === null)
    throw new Error(`MNEMO_DEFAULT_MODEL=${JSON.stringify(id)}: neither a model in tools/train/models nor a synthetic catalog id`);
  if (env.NODE_MODELS) {
    const listed = env.NODE_MODELS.split(',').map((m) => m.trim().replace(/\/+$/, ''));
    if (!listed.some((m) => m === id || m.split('/').pop() === id))
      throw new Error(`MNEMO_DEFAULT_MODEL=${id} is not among NODE_MODELS (${env.NODE_MODELS})`);
  }
  return { id, served };
}
