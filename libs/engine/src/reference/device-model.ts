import type { KernelBackend } from '@mnemo/native-cuda';
import type { ModelConfig } from '../model/model-config.js';
import { requireTensor, TensorNames, type LayerTensor, type ModelWeights } from '../weights/model-weights.js';

export interface DeviceLayer<T> {
  readonly inputNorm: T;
  readonly postNorm: T;
  readonly wq: T;
  readonly wk: T;
  readonly wv: T;
  readonly wo: T;
  readonly wGate: T;
  readonly wUp: T;
  readonly wDown: T;
  /** Qwen2 q/k/v projection biases. */
  readonly bias?: { readonly q: T; readonly k: T; readonly v: T };
  readonly qNorm?: T;
  readonly kNorm?: T;
}

/** A model's weights resident on one backend. */
export class DeviceModel<T> {
  readonly config: ModelConfig;
  readonly embed: T;
  readonly finalNorm: T;
  readonly lmHead: T;
  readonly layers: readonly DeviceLayer<T>[];
  private readonly owned: T[] = [];

  constructor(
    private readonly backend: KernelBackend<T>,
    weights: ModelWeights,
  ) {
    const c = (this.config = weights.config);
    const up = (name: string): T => this.upload(requireTensor(weights, name).data);
    this.embed = up(TensorNames.embed);
    this.finalNorm = up(TensorNames.finalNorm);
    this.lmHead = c.tieEmbeddings ? this.embed : up(TensorNames.lmHead);
    const layers: DeviceLayer<T>[] = [];
    for (let l = 0; l < c.layers; l++) {
      const n = (s: LayerTensor): string => TensorNames.layer(l, s);
      layers.push({
        inputNorm: up(n('input_layernorm.weight')),
        postNorm: up(n('post_attention_layernorm.weight')),
        wq: up(n('self_attn.q_proj.weight')),
        wk: up(n('self_attn.k_proj.weight')),
        wv: up(n('self_attn.v_proj.weight')),
        wo: up(n('self_attn.o_proj.weight')),
        wGate: up(n('mlp.gate_proj.weight')),
        wUp: up(n('mlp.up_proj.weight')),
        wDown: up(n('mlp.down_proj.weight')),
        bias: c.qkvBias
          ? { q: up(n('self_attn.q_proj.bias')), k: up(n('self_attn.k_proj.bias')), v: up(n('self_attn.v_proj.bias')) }
          : undefined,
        qNorm: c.qkNorm ? up(n('self_attn.q_norm.weight')) : undefined,
        kNorm: c.qkNorm ? up(n('self_attn.k_norm.weight')) : undefined,
      });
    }
    this.layers = layers;
  }

  free(): void {
    for (const t of this.owned) this.backend.free(t);
    this.owned.length = 0;
  }

  private upload(data: Float32Array): T {
    const t = this.backend.alloc(data.length);
    this.backend.upload(t, data);
    this.owned.push(t);
    return t;
  }
}
