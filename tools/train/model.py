"""The Llama-family model the fortune trainer trains, and its export to the Hugging Face layout
libs/engine loads (config.json, model.safetensors in BF16, tokenizer files).

RMSNorm, RoPE (NeoX rotate_half, as the engine), grouped-query attention, SwiGLU, tied
embeddings. q/k/v and gate/up are fused for speed while training and split on export.
"""
import json
import math
import os
import struct

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, d, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope(x, cos, sin):
    h = x.shape[-1] // 2
    return x * cos + torch.cat((-x[..., h:], x[..., :h]), dim=-1) * sin


class Layer(nn.Module):
    def __init__(self, c):
        super().__init__()
        d, hd = c['d'], c['head_dim']
        self.c = c
        self.input_layernorm = RMSNorm(d, c['eps'])
        self.post_attention_layernorm = RMSNorm(d, c['eps'])
        self.qkv = nn.Linear(d, (c['heads'] + 2 * c['kv_heads']) * hd, bias=False)
        self.o_proj = nn.Linear(c['heads'] * hd, d, bias=False)
        self.gate_up = nn.Linear(d, 2 * c['ffn'], bias=False)
        self.down_proj = nn.Linear(c['ffn'], d, bias=False)

    def forward(self, x, cos, sin, mask):
        c = self.c
        B, T, _ = x.shape
        H, KV, hd = c['heads'], c['kv_heads'], c['head_dim']
        q, k, v = self.qkv(self.input_layernorm(x)).split([H * hd, KV * hd, KV * hd], dim=-1)
        q = rope(q.view(B, T, H, hd).transpose(1, 2), cos, sin)
        k = rope(k.view(B, T, KV, hd).transpose(1, 2), cos, sin)
        v = v.view(B, T, KV, hd).transpose(1, 2)
        # Grouped-query attention: each KV head serves H/KV query heads. Written out (torch
        # 1.13 has no scaled_dot_product_attention); the mask is additive -inf above the diagonal.
        k = k.repeat_interleave(H // KV, dim=1)
        v = v.repeat_interleave(H // KV, dim=1)
        a = torch.softmax((q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(hd)) + mask, dim=-1) @ v
        x = x + self.o_proj(a.transpose(1, 2).reshape(B, T, H * hd))
        g, u = self.gate_up(self.post_attention_layernorm(x)).chunk(2, dim=-1)
        return x + self.down_proj(F.silu(g) * u)


class Model(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.embed_tokens = nn.Embedding(c['vocab'], c['d'])
        self.layers = nn.ModuleList([Layer(c) for _ in range(c['layers'])])
        self.norm = RMSNorm(c['d'], c['eps'])
        hd = c['head_dim']
        inv = 1.0 / (c['rope_theta'] ** (torch.arange(0, hd, 2).float() / hd))
        ang = torch.outer(torch.arange(c['max_ctx']).float(), inv)
        emb = torch.cat((ang, ang), dim=-1)
        self.register_buffer('cos', emb.cos(), persistent=False)
        self.register_buffer('sin', emb.sin(), persistent=False)
        self.apply(self._init)
        # GPT-2 style: residual projections scaled down with depth.
        for l in self.layers:
            for m in (l.o_proj, l.down_proj):
                nn.init.normal_(m.weight, std=0.02 / math.sqrt(2 * c['layers']))

    @staticmethod
    def _init(m):
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=0.02)

    def forward(self, ids):
        T = ids.shape[1]
        mask = torch.full((T, T), float('-inf')).triu(1)
        x = self.embed_tokens(ids)
        for layer in self.layers:
            x = layer(x, self.cos[:T], self.sin[:T], mask)
        return self.norm(x) @ self.embed_tokens.weight.t()


def round_bf16_(model):
    """Rounds every weight to bf16 in place (round to nearest even), as the export stores them."""
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(p.to(torch.bfloat16).float())


def hf_tensors(model):
    c, H, KV, hd = model.c, model.c['heads'], model.c['kv_heads'], model.c['head_dim']
    t = {'model.embed_tokens.weight': model.embed_tokens.weight, 'model.norm.weight': model.norm.weight}
    for i, l in enumerate(model.layers):
        p = f'model.layers.{i}.'
        q, k, v = l.qkv.weight.split([H * hd, KV * hd, KV * hd], dim=0)
        g, u = l.gate_up.weight.chunk(2, dim=0)
        t.update({
            p + 'input_layernorm.weight': l.input_layernorm.weight, p + 'post_attention_layernorm.weight': l.post_attention_layernorm.weight,
            p + 'self_attn.q_proj.weight': q, p + 'self_attn.k_proj.weight': k, p + 'self_attn.v_proj.weight': v,
            p + 'self_attn.o_proj.weight': l.o_proj.weight, p + 'mlp.gate_proj.weight': g, p + 'mlp.up_proj.weight': u,
            p + 'mlp.down_proj.weight': l.down_proj.weight,
        })
    return t


SAFETENSORS_ENCODERS = {
    # bf16 bits = the high half of the rounded fp32 (torch's rounding: nearest even).
    'BF16': lambda t: t.detach().to(torch.bfloat16).contiguous().view(torch.int16).numpy().astype('<i2').tobytes(),
    'F32': lambda t: t.contiguous().numpy().astype('<f4').tobytes(),
}


def write_safetensors(path, tensors, dtype):
    encode = SAFETENSORS_ENCODERS[dtype]
    header, blobs, off = {'__metadata__': {'format': 'pt'}}, [], 0
    for k in sorted(tensors):
        b = encode(tensors[k])
        header[k] = {'dtype': dtype, 'shape': list(tensors[k].shape), 'data_offsets': [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(',', ':')).encode()
    h += b' ' * ((8 - len(h) % 8) % 8)
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(h)) + h + b''.join(blobs))


def export(model, bpe, out):
    c = model.c
    os.makedirs(out, exist_ok=True)
    write_safetensors(os.path.join(out, 'model.safetensors'), hf_tensors(model), 'BF16')
    with open(os.path.join(out, 'config.json'), 'w') as f:
        json.dump({
            'architectures': ['LlamaForCausalLM'], 'model_type': 'llama', 'num_hidden_layers': c['layers'], 'hidden_size': c['d'],
            'num_attention_heads': c['heads'], 'num_key_value_heads': c['kv_heads'], 'head_dim': c['head_dim'], 'intermediate_size': c['ffn'],
            'vocab_size': c['vocab'], 'rope_theta': c['rope_theta'], 'rms_norm_eps': c['eps'], 'max_position_embeddings': c['max_ctx'],
            'tie_word_embeddings': True, 'hidden_act': 'silu', 'torch_dtype': 'bfloat16', 'bos_token_id': bpe.bos, 'eos_token_id': bpe.im_end,
        }, f, indent=2)
    with open(os.path.join(out, 'tokenizer.json'), 'w', encoding='utf-8') as f:
        json.dump(bpe.tokenizer_json(), f, ensure_ascii=False, separators=(',', ':'))
    with open(os.path.join(out, 'tokenizer_config.json'), 'w') as f:
        json.dump({'bos_token': '<|endoftext|>', 'eos_token': '<|im_end|>', 'model_max_length': c['max_ctx']}, f, indent=2)
    return sum(os.path.getsize(os.path.join(out, n)) for n in os.listdir(out))
