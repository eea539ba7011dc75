import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { isHfModelDir, loadHfModel } from './hf-model.loader.js';
import type { HostTensor, ModelWeights } from './model-weights.js';
import { SafetensorsFile } from './safetensors.format.js';

const CONFIG = 'adapter_config.json';
const WEIGHTS = 'adapter_model.safetensors';
/** The projections an adapter may target, and where each sits in a decoder layer. */
const MODULES: Record<string, string> = {
  q_proj: 'self_attn.q_proj',
  k_proj: 'self_attn.k_proj',
  v_proj: 'self_attn.v_proj',
  o_proj: 'self_attn.o_proj',
  gate_proj: 'mlp.gate_proj',
  up_proj: 'mlp.up_proj',
  down_proj: 'mlp.down_proj',
};
const NAME = /^base_model\.model\.model\.layers\.(\d+)\.(self_attn|mlp)\.(\w+)\.lora_([AB])\.weight$/;

/** The subset of PEFT's adapter_config.json a merge needs. */
export interface LoraAdapterConfig {
  readonly peft_type: string;
  readonly base_model_name_or_path: string;
  readonly r: number;
  readonly lora_alpha: number;
  readonly target_modules: readonly string[];
  readonly fan_in_fan_out?: boolean;
  readonly use_rslora?: boolean;
  readonly use_dora?: boolean;
  readonly bias?: string;
}

/** True when `dir` holds a PEFT LoRA adapter (adapter_config.json + adapter_model.safetensors). */
export function isLoraAdapterDir(dir: string): boolean {
  return existsSync(join(dir, CONFIG)) && existsSync(join(dir, WEIGHTS));
}

/**
 * The base model directory an adapter names: an absolute path, or a name or relative path
 * resolved against the adapter's parent directory (adapters sit beside their base).
 */
export function adapterBaseDir(dir: string): string {
  const cfg = readAdapterConfig(dir);
  const b = cfg.base_model_name_or_path;
  return isAbsolute(b) ? b : resolve(dirname(resolve(dir)), b);
}

function readAdapterConfig(dir: string): LoraAdapterConfig {
  const cfg = JSON.parse(readFileSync(join(dir, CONFIG), 'utf8')) as LoraAdapterConfig;
  const problems: string[] = [];
  if (cfg.peft_type !== 'LORA') problems.push(`peft_type ${JSON.stringify(cfg.peft_type)} (only LORA)`);
  if (!Number.isInteger(cfg.r) || cfg.r <= 0) problems.push(`r ${cfg.r} is not a positive integer`);
  if (!(Number.isFinite(cfg.lora_alpha) && cfg.lora_alpha > 0)) problems.push(`lora_alpha ${cfg.lora_alpha} is not positive`);
  if (typeof cfg.base_model_name_or_path !== 'string' || !cfg.base_model_name_or_path) problems.push('no base_model_name_or_path');
  if (cfg.fan_in_fan_out) problems.push('fan_in_fan_out (Conv1D layouts) is not supported');
  if (cfg.use_dora) problems.push('DoRA is not supported');
  if (cfg.bias && cfg.bias !== 'none') problems.push(`bias ${JSON.stringify(cfg.bias)} (only none)`);
  for (const m of cfg.target_modules ?? []) if (!MODULES[m]) problems.push(`target module ${JSON.stringify(m)} is not a Llama projection`);
  if (problems.length) throw new Error(`adapter ${dir}: ${problems.join('; ')}`);
  return cfg;
}

/**
 * Loads a LoRA adapter merged into its base: W' = W + (alpha / r) B A in fp32 for every adapted
 * projection (alpha / √r with rsLoRA). The result is a model of its own id, so everything keyed
 * by model (chunk keys, prefix caches, plans) keeps the adapter's KV apart from its base's. Every
 * tensor's shape is checked against the base; an A without its B, an unknown layer or module, or
 * a module the config does not list is an error.
 */
export function loadLoraMerged(dir: string, id = basename(dir)): ModelWeights {
  const cfg = readAdapterConfig(dir);
  const baseDir = adapterBaseDir(dir);
  if (!isHfModelDir(baseDir)) throw new Error(`adapter ${id}: base ${baseDir} is not a model directory (config.json + safetensors)`);
  const base = loadHfModel(baseDir);
  const scale = cfg.lora_alpha / (cfg.use_rslora ? Math.sqrt(cfg.r) : cfg.r);
  const file = new SafetensorsFile(join(dir, WEIGHTS));
  const pairs = new Map<string, { A?: HostTensor; B?: HostTensor }>();
  for (const name of file.entries.keys()) {
    const m = NAME.exec(name);
    if (!m) throw new Error(`adapter ${id}: unexpected tensor ${name}`);
    const [, layer, , module, ab] = m;
    if (Number(layer) >= base.config.layers) throw new Error(`adapter ${id}: ${name} is past the base's ${base.config.layers} layers`);
    if (!cfg.target_modules.includes(module!)) throw new Error(`adapter ${id}: ${name} adapts ${module}, not in target_modules`);
    const key = `model.layers.${layer}.${MODULES[module!]}.weight`;
    const p = pairs.get(key) ?? {};
    p[ab as 'A' | 'B'] = file.read(name);
    pairs.set(key, p);
  }
  const tensors = new Map(base.tensors);
  for (const [key, { A, B }] of pairs) {
    const w = tensors.get(key);
    if (!A || !B || !w) throw new Error(`adapter ${id}: ${key} needs both lora_A and lora_B and a base tensor`);
    const [out, inp] = w.shape as [number, number];
    if (A.shape[0] !== cfg.r || A.shape[1] !== inp || B.shape[0] !== out || B.shape[1] !== cfg.r) {
      throw new Error(`adapter ${id}: ${key}: A [${A.shape}], B [${B.shape}] do not fit [${w.shape}] at rank ${cfg.r}`);
    }
    tensors.set(key, { shape: w.shape, data: mergeLowRank(w.data, A.data, B.data, out, inp, cfg.r, scale) });
  }
  return { config: { ...base.config, id }, tensors };
}

/** W + scale · B A, with B [out, r] and A [r, in]. */
function mergeLowRank(w: Float32Array, a: Float32Array, b: Float32Array, out: number, inp: number, r: number, scale: number): Float32Array {
  const merged = new Float32Array(w);
  for (let o = 0; o < out; o++) {
    for (let k = 0; k < r; k++) {
      const s = scale * b[o * r + k]!;
      if (s === 0) continue;
      const row = k * inp;
      const at = o * inp;
      for (let i = 0; i < inp; i++) merged[at + i]! += s * a[row + i]!;
    }
  }
  return merged;
}
