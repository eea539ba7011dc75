import { validateModelConfig, type ModelConfig } from '../model/model-config.js';

/** The subset of a Hugging Face config.json the reference engine understands. */
export interface HfConfigJson {
  architectures?: string[];
  model_type?: string;
  num_hidden_layers: number;
  hidden_size: number;
  num_attention_heads: number;
  num_key_value_heads?: number;
  head_dim?: number;
  intermediate_size: number;
  vocab_size: number;
  rope_theta?: number;
  rms_norm_eps?: number;
  max_position_embeddings?: number;
  tie_word_embeddings?: boolean;
  attention_bias?: boolean;
  mlp_bias?: boolean;
  hidden_act?: string;
  rope_scaling?: unknown;
  use_sliding_window?: boolean;
  bos_token_id?: number | number[] | null;
  eos_token_id?: number | number[] | null;
}

export const SUPPORTED_ARCHITECTURES = ['LlamaForCausalLM', 'Qwen2ForCausalLM', 'Qwen3ForCausalLM'] as const;
export type HfArchitecture = (typeof SUPPORTED_ARCHITECTURES)[number];

function firstId(v: number | number[] | null | undefined, fallback: number): number {
  if (Array.isArray(v)) return v.length > 0 ? v[0] : fallback;
  return typeof v === 'number' ? v : fallback;
}

/**
 * Maps config.json to a ModelConfig, refusing features the kernels do not implement
 * (scaled RoPE, sliding windows, o_proj/MLP biases, non-SiLU activations) instead of
 * silently computing something else.
 */
export function parseHfConfig(id: string, json: HfConfigJson): ModelConfig {
  const arch = json.architectures?.[0];
  if (!arch || !(SUPPORTED_ARCHITECTURES as readonly string[]).includes(arch)) {
    throw new Error(`model ${id}: unsupported architecture ${arch ?? '(none)'}; supported: ${SUPPORTED_ARCHITECTURES.join(', ')}`);
  }
  const unsupported: string[] = [];
  if (json.hidden_act !== undefined && json.hidden_act !== 'silu') unsupported.push(`hidden_act=${json.hidden_act}`);
  if (json.rope_scaling) unsupported.push('rope_scaling');
  if (json.use_sliding_window) unsupported.push('use_sliding_window');
  if (json.mlp_bias) unsupported.push('mlp_bias');
  if (arch === 'LlamaForCausalLM' && json.attention_bias) unsupported.push('attention_bias (o_proj bias)');
  if (arch === 'Qwen3ForCausalLM' && json.attention_bias) unsupported.push('attention_bias');
  if (unsupported.length > 0) throw new Error(`model ${id}: unsupported config: ${unsupported.join(', ')}`);

  const heads = json.num_attention_heads;
  return validateModelConfig({
    id,
    layers: json.num_hidden_layers,
    dModel: json.hidden_size,
    heads,
    kvHeads: json.num_key_value_heads ?? heads,
    headDim: json.head_dim ?? json.hidden_size / heads,
    ffn: json.intermediate_size,
    vocab: json.vocab_size,
    ropeTheta: json.rope_theta ?? 10000,
    rmsEps: json.rms_norm_eps ?? 1e-6,
    maxContext: json.max_position_embeddings ?? 4096,
    tieEmbeddings: json.tie_word_embeddings ?? false,
    qkvBias: arch === 'Qwen2ForCausalLM',
    qkNorm: arch === 'Qwen3ForCausalLM',
    bosTokenId: firstId(json.bos_token_id, 0),
    eosTokenId: firstId(json.eos_token_id, 0),
  });
}

/** The config.json a Hugging Face loader would accept for `c` (used to export synthetic models). */
export function toHfConfig(c: ModelConfig): HfConfigJson {
  const arch: HfArchitecture = c.qkNorm ? 'Qwen3ForCausalLM' : c.qkvBias ? 'Qwen2ForCausalLM' : 'LlamaForCausalLM';
  return {
    architectures: [arch],
    model_type: arch === 'LlamaForCausalLM' ? 'llama' : arch === 'Qwen2ForCausalLM' ? 'qwen2' : 'qwen3',
    num_hidden_layers: c.layers,
    hidden_size: c.dModel,
    num_attention_heads: c.heads,
    num_key_value_heads: c.kvHeads,
    head_dim: c.headDim,
    intermediate_size: c.ffn,
    vocab_size: c.vocab,
    rope_theta: c.ropeTheta,
    rms_norm_eps: c.rmsEps,
    max_position_embeddings: c.maxContext,
    tie_word_embeddings: c.tieEmbeddings,
    hidden_act: 'silu',
    bos_token_id: c.bosTokenId,
    eos_token_id: c.eosTokenId,
  };
}
