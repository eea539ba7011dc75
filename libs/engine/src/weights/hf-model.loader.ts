import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parseHfConfig, toHfConfig, type HfConfigJson } from './hf-config.parser.js';
import { expectedTensors, type HostTensor, type ModelWeights } from './model-weights.js';
import { SafetensorsFile, writeSafetensors, type SafetensorsDtype } from './safetensors.format.js';

const SINGLE = 'model.safetensors';
const INDEX = 'model.safetensors.index.json';

/** True when `dir` looks like a Hugging Face model directory we can load. */
export function isHfModelDir(dir: string): boolean {
  return existsSync(join(dir, 'config.json')) && (existsSync(join(dir, SINGLE)) || existsSync(join(dir, INDEX)));
}

/**
 * Loads a Llama / Qwen2 / Qwen3 model from a local directory (config.json plus
 * model.safetensors, or shards listed in model.safetensors.index.json), converting
 * F32/F16/BF16 to fp32 and checking every tensor's shape against the config.
 */
export function loadHfModel(dir: string, id = basename(dir)): ModelWeights {
  const json = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as HfConfigJson;
  const config = parseHfConfig(id, json);
  const fileOf = shardMap(dir);
  const files = new Map<string, SafetensorsFile>();
  const open = (file: string): SafetensorsFile => {
    let f = files.get(file);
    if (!f) files.set(file, (f = new SafetensorsFile(join(dir, file))));
    return f;
  };
  const tensors = new Map<string, HostTensor>();
  for (const spec of expectedTensors(config)) {
    const file = fileOf(spec.name);
    if (!file || !open(file).entries.has(spec.name)) throw new Error(`model ${id}: missing tensor ${spec.name}`);
    const t = open(file).read(spec.name);
    if (t.shape.length !== spec.shape.length || t.shape.some((d, i) => d !== spec.shape[i])) {
      throw new Error(`model ${id}: tensor ${spec.name} has shape [${t.shape}], expected [${spec.shape}]`);
    }
    tensors.set(spec.name, t);
  }
  return { config, tensors };
}

function shardMap(dir: string): (name: string) => string | undefined {
  const indexPath = join(dir, INDEX);
  if (existsSync(indexPath)) {
    const index = JSON.parse(readFileSync(indexPath, 'utf8')) as { weight_map: Record<string, string> };
    return (name) => index.weight_map[name];
  }
  return () => SINGLE;
}

/**
 * Writes weights as a Hugging Face directory; `shards` > 1 splits tensors round-robin
 * across files with an index, exercising the sharded path.
 */
export function saveHfModel(dir: string, w: ModelWeights, opts: { dtype?: SafetensorsDtype; shards?: number } = {}): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'config.json'), JSON.stringify(toHfConfig(w.config), null, 2));
  const shards = opts.shards ?? 1;
  if (shards <= 1) {
    writeSafetensors(join(dir, SINGLE), w.tensors, opts.dtype);
    return;
  }
  const groups = Array.from({ length: shards }, () => new Map<string, HostTensor>());
  [...w.tensors].forEach(([name, t], i) => groups[i % shards].set(name, t));
  const weightMap: Record<string, string> = {};
  groups.forEach((g, i) => {
    const file = `model-${String(i + 1).padStart(5, '0')}-of-${String(shards).padStart(5, '0')}.safetensors`;
    writeSafetensors(join(dir, file), g, opts.dtype);
    for (const name of g.keys()) weightMap[name] = file;
  });
  writeFileSync(join(dir, INDEX), JSON.stringify({ metadata: {}, weight_map: weightMap }, null, 2));
}
