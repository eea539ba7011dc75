import type { KernelBackend } from '@mnemo/native-cuda';
import type { ModelConfig } from '../model/model-config.js';
import { requireTensor, TensorNames, type LayerTensor, type ModelWeights } from '../weights/model-weights.js';

/** Linear weights are stored in the backend's GEMM layout (`packWeight`): use them with `matmulPacked`. */
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
  /** Packed for matmulPacked (a separate copy of `embed` when the head is tied). */
  readonly lmHead: T;
  readonly layers: readonly DeviceLayer<T>[];
  private readonly owned: T[] = [];

  constructor(
    private readonly backend: KernelBackend<T>,
    weights: ModelWeights,
  ) {
    const c = (this.config = weights.config);
    const up = (name: string): T => this.upload(requireTensor(weights, name).data);
    // Weights never change after upload, so each linear weight is packed once here.
    const lin = (name: string, n: number, k: number): T => this.pack(this.upload(requireTensor(weights, name).data, false), n, k);
    const qDim = c.heads * c.headDim;
    const kvd = c.kvHeads * c.headDim;
    const d = c.dModel;
    this.embed = up(TensorNames.embed);
    this.finalNorm = up(TensorNames.finalNorm);
    this.lmHead = c.tieEmbeddings ? this.pack(this.embed, c.vocab, d, false) : lin(TensorNames.lmHead, c.vocab, d);
    const layers: DeviceLayer<T>[] = [];
    for (let l = 0; l < c.layers; l++) {
      const n = (s: LayerTensor): string => TensorNames.layer(l, s);
      layers.push({
        inputNorm: up(n('input_layernorm.weight')),
        postNorm: up(n('post_attention_layernorm.weight')),
        wq: lin(n('self_attn.q_proj.weight'), qDim, d),
        wk: lin(n('self_attn.k_proj.weight'), kvd, d),
        wv: lin(n('self_attn.v_proj.weight'), kvd, d),
        wo: lin(n('self_attn.o_proj.weight'), d, qDim),
        wGate: lin(n('mlp.gate_proj.weight'), c.ffn, d),
        wUp: lin(n('mlp.up_proj.weight'), c.ffn, d),
        wDown: lin(n('mlp.down_proj.weight'), d, c.ffn),
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

  private upload(data: Float32Array, own = true): T {
    const t = this.backend.alloc(data.length);
    this.backend.upload(t, data);
    if (own) this.owned.push(t);
    return t;
  }

  /** The packed form of `t` [n, k]; an unowned source is freed after packing unless the backend packs to `t` itself. */
  private pack(t: T, n: number, k: number, freeSource = true): T {
    const p = this.backend.packWeight(t, n, k);
    if (p !== t) {
      this.owned.push(p);
      if (freeSource) this.backend.free(t);
    } else if (freeSource) this.owned.push(t);
    return p;
  }
}
