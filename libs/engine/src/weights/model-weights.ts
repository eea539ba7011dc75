import type { ModelConfig } from '../model/model-config.js';

/** One host tensor in fp32, row-major, Hugging Face layout ([out, in] for linear weights). */
export interface HostTensor {
  readonly shape: readonly number[];
  readonly data: Float32Array;
}

/** A model's weights on the host, keyed by Hugging Face tensor name. */
export interface ModelWeights {
  readonly config: ModelConfig;
  readonly tensors: ReadonlyMap<string, HostTensor>;
}

/** Hugging Face tensor names of the Llama / Qwen2 / Qwen3 families. */
export const TensorNames = {
  embed: 'model.embed_tokens.weight',
  finalNorm: 'model.norm.weight',
  lmHead: 'lm_head.weight',
  layer: (l: number, suffix: LayerTensor): string => `model.layers.${l}.${suffix}`,
} as const;

export type LayerTensor =
  | 'input_layernorm.weight'
  | 'post_attention_layernorm.weight'
  | 'self_attn.q_proj.weight'
  | 'self_attn.k_proj.weight'
  | 'self_attn.v_proj.weight'
  | 'self_attn.o_proj.weight'
  | 'self_attn.q_proj.bias'
  | 'self_attn.k_proj.bias'
  | 'self_attn.v_proj.bias'
  | 'self_attn.q_norm.weight'
  | 'self_attn.k_norm.weight'
  | 'mlp.gate_proj.weight'
  | 'mlp.up_proj.weight'
  | 'mlp.down_proj.weight';

export type TensorKind = 'embedding' | 'norm' | 'linear' | 'bias';

export interface TensorSpec {
  readonly name: string;
  readonly shape: readonly number[];
  readonly kind: TensorKind;
  /** Decoder layer index, or -1 for embedding / final norm / head. */
  readonly layer: number;
}

/** Every tensor a config needs, with its expected shape; the loaders check against this. */
export function expectedTensors(c: ModelConfig): TensorSpec[] {
  const q = c.heads * c.headDim;
  const kv = c.kvHeads * c.headDim;
  const out: TensorSpec[] = [{ name: TensorNames.embed, shape: [c.vocab, c.dModel], kind: 'embedding', layer: -1 }];
  for (let l = 0; l < c.layers; l++) {
    const t = (suffix: LayerTensor, shape: number[], kind: TensorKind): void => {
      out.push({ name: TensorNames.layer(l, suffix), shape, kind, layer: l });
    };
    t('input_layernorm.weight', [c.dModel], 'norm');
    t('self_attn.q_proj.weight', [q, c.dModel], 'linear');
    t('self_attn.k_proj.weight', [kv, c.dModel], 'linear');
    t('self_attn.v_proj.weight', [kv, c.dModel], 'linear');
    if (c.qkvBias) {
      t('self_attn.q_proj.bias', [q], 'bias');
      t('self_attn.k_proj.bias', [kv], 'bias');
      t('self_attn.v_proj.bias', [kv], 'bias');
    }
    if (c.qkNorm) {
      t('self_attn.q_norm.weight', [c.headDim], 'norm');
      t('self_attn.k_norm.weight', [c.headDim], 'norm');
    }
    t('self_attn.o_proj.weight', [c.dModel, q], 'linear');
    t('post_attention_layernorm.weight', [c.dModel], 'norm');
    t('mlp.gate_proj.weight', [c.ffn, c.dModel], 'linear');
    t('mlp.up_proj.weight', [c.ffn, c.dModel], 'linear');
    t('mlp.down_proj.weight', [c.dModel, c.ffn], 'linear');
  }
  out.push({ name: TensorNames.finalNorm, shape: [c.dModel], kind: 'norm', layer: -1 });
  if (!c.tieEmbeddings) out.push({ name: TensorNames.lmHead, shape: [c.vocab, c.dModel], kind: 'linear', layer: -1 });
  return out;
}

/** Looks up a tensor, failing with its name (a missing tensor is a broken model directory). */
export function requireTensor(w: ModelWeights, name: string): HostTensor {
  const t = w.tensors.get(name);
  if (!t) throw new Error(`model ${w.config.id}: missing tensor ${name}`);
  return t;
}
