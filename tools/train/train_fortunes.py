#!/usr/bin/env python3
"""Trains the small byte-level Llama-family models Mnemo ships (a developer tool, never a
runtime dependency): a base model on Debian's `fortunes` corpus minus two categories, then two
fine-tunes of it, one per held-out category. Same architecture and tokenizer for all three,
so they form DroidSpeak (base -> derived) pairs with real, learned differences.

Writes tools/train/models/<name>/{config.json, model.safetensors, tokenizer.json,
tokenizer_config.json} in the Hugging Face layout the engine loads, and TRAINING.json with the
corpus, its licence, the settings and the final losses.

Run with Debian's PyTorch (python3-torch), CPU only:
    /usr/bin/python3 tools/train/train_fortunes.py [--base-seconds 240] [--ft-seconds 75]
Training stops on a wall-clock budget, so the result depends on the machine's speed; the
seed fixes data order and initialisation.
"""
import argparse
import json
import math
import os
import random
import struct
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
FORTUNES = '/usr/share/games/fortunes'
FINE_TUNES = {'fortune-computers': 'computers', 'fortune-songs': 'songs-poems'}
# Byte ids 0-255, then the ChatML specials the gateway's template needs (ids as in tokenizer.json).
BOS, IM_START, IM_END = 256, 257, 258
VOCAB = 259
# Small on purpose: Debian's torch uses the generic reference BLAS (about 1 GFLOP/s here), so
# a minutes-long budget only trains a model this size to word-like output.
CFG = dict(layers=4, d=96, heads=4, kv_heads=2, head_dim=24, ffn=256, rope_theta=10000.0, eps=1e-5, max_ctx=512)
SEQ = 96
ASKS = ['Tell me a fortune.', 'Say something wise.', 'Give me a quote.', 'What do you know?', 'Hello!']


def read_category(name):
    with open(os.path.join(FORTUNES, name), encoding='utf-8', errors='replace') as f:
        return [t.strip() for t in f.read().split('\n%\n') if t.strip()]


def base_categories():
    skip = set(FINE_TUNES.values())
    names = [n for n in sorted(os.listdir(FORTUNES)) if '.' not in n and n not in skip and os.path.isfile(os.path.join(FORTUNES, n))]
    return names


def encode_sample(text, rng):
    """Half plain text, half a ChatML exchange ending in <|im_end|>: chat prompts then get fortunes back."""
    body = list(text.encode('utf-8'))
    if rng.random() < 0.5:
        return [BOS] + body + [IM_END]
    ask = rng.choice(ASKS)
    return ([BOS, IM_START] + list(f'user\n{ask}'.encode()) + [IM_END] + list(b'\n') + [IM_START] + list(b'assistant\n') + body + [IM_END])


def batches(texts, rng, batch):
    """Packs samples into SEQ+1 windows (next-byte prediction), forever."""
    stream = []
    while True:
        rng.shuffle(texts)
        for t in texts:
            stream.extend(encode_sample(t, rng))
            while len(stream) >= batch * (SEQ + 1):
                chunk = torch.tensor(stream[: batch * (SEQ + 1)]).view(batch, SEQ + 1)
                del stream[: batch * (SEQ + 1)]
                yield chunk[:, :-1], chunk[:, 1:]


class RMSNorm(nn.Module):
    def __init__(self, d, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope(x, cos, sin):
    # NeoX / Hugging Face Llama rotate_half: pairs (i, i + head_dim/2).
    h = x.shape[-1] // 2
    x1, x2 = x[..., :h], x[..., h:]
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


class Layer(nn.Module):
    def __init__(self, c):
        super().__init__()
        d, hd = c['d'], c['head_dim']
        self.c = c
        self.input_layernorm = RMSNorm(d, c['eps'])
        self.post_attention_layernorm = RMSNorm(d, c['eps'])
        self.q_proj = nn.Linear(d, c['heads'] * hd, bias=False)
        self.k_proj = nn.Linear(d, c['kv_heads'] * hd, bias=False)
        self.v_proj = nn.Linear(d, c['kv_heads'] * hd, bias=False)
        self.o_proj = nn.Linear(c['heads'] * hd, d, bias=False)
        self.gate_proj = nn.Linear(d, c['ffn'], bias=False)
        self.up_proj = nn.Linear(d, c['ffn'], bias=False)
        self.down_proj = nn.Linear(c['ffn'], d, bias=False)

    def forward(self, x, cos, sin):
        c = self.c
        B, T, _ = x.shape
        h = self.input_layernorm(x)
        q = self.q_proj(h).view(B, T, c['heads'], c['head_dim']).transpose(1, 2)
        k = self.k_proj(h).view(B, T, c['kv_heads'], c['head_dim']).transpose(1, 2)
        v = self.v_proj(h).view(B, T, c['kv_heads'], c['head_dim']).transpose(1, 2)
        q, k = rope(q, cos, sin), rope(k, cos, sin)
        rep = c['heads'] // c['kv_heads']
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        # Causal softmax attention written out (torch 1.13 has no scaled_dot_product_attention).
        s = (q @ k.transpose(-1, -2)) / math.sqrt(c['head_dim'])
        s = s.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float('-inf'))
        a = torch.softmax(s, dim=-1) @ v
        x = x + self.o_proj(a.transpose(1, 2).reshape(B, T, -1))
        h = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))


class Model(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.embed_tokens = nn.Embedding(VOCAB, c['d'])
        self.layers = nn.ModuleList([Layer(c) for _ in range(c['layers'])])
        self.norm = RMSNorm(c['d'], c['eps'])
        self.lm_head = nn.Linear(c['d'], VOCAB, bias=False)
        inv = 1.0 / (c['rope_theta'] ** (torch.arange(0, c['head_dim'], 2).float() / c['head_dim']))
        ang = torch.outer(torch.arange(c['max_ctx']).float(), inv)
        emb = torch.cat((ang, ang), dim=-1)
        self.register_buffer('cos', emb.cos(), persistent=False)
        self.register_buffer('sin', emb.sin(), persistent=False)

    def forward(self, ids):
        T = ids.shape[1]
        x = self.embed_tokens(ids)
        for layer in self.layers:
            x = layer(x, self.cos[:T], self.sin[:T])
        return self.lm_head(self.norm(x))


def train(model, texts, seconds, lr, seed, batch, log):
    rng = random.Random(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01, betas=(0.9, 0.95))
    it = batches(list(texts), rng, batch)
    t0, step, ema = time.time(), 0, None
    while time.time() - t0 < seconds:
        x, y = next(it)
        # Short warm-up, then constant: the run length is a time budget, not a step count.
        for g in opt.param_groups:
            g['lr'] = lr * min(1.0, (step + 1) / 30)
        loss = F.cross_entropy(model(x).reshape(-1, VOCAB), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        ema = loss.item() if ema is None else 0.95 * ema + 0.05 * loss.item()
        step += 1
        if step % 50 == 0:
            log(f'  step {step:5d}  loss {ema:.3f} nats/byte  ({time.time() - t0:.0f}s)')
    return {'steps': step, 'final_loss_ema': round(ema, 4), 'seconds': round(time.time() - t0, 1)}


@torch.no_grad()
def eval_loss(model, texts, seed, batch=8, n=8):
    it = batches(list(texts), random.Random(seed), batch)
    losses = [F.cross_entropy(model(x).reshape(-1, VOCAB), y.reshape(-1)).item() for x, y in (next(it) for _ in range(n))]
    return round(sum(losses) / len(losses), 4)


def save(model, name, meta):
    out = os.path.join(HERE, 'models', name)
    os.makedirs(out, exist_ok=True)
    c = model.c
    tensors = {'model.embed_tokens.weight': model.embed_tokens.weight, 'model.norm.weight': model.norm.weight, 'lm_head.weight': model.lm_head.weight}
    for i, l in enumerate(model.layers):
        p = f'model.layers.{i}.'
        tensors[p + 'input_layernorm.weight'] = l.input_layernorm.weight
        tensors[p + 'post_attention_layernorm.weight'] = l.post_attention_layernorm.weight
        for n in ('q_proj', 'k_proj', 'v_proj', 'o_proj'):
            tensors[p + f'self_attn.{n}.weight'] = getattr(l, n).weight
        for n in ('gate_proj', 'up_proj', 'down_proj'):
            tensors[p + f'mlp.{n}.weight'] = getattr(l, n).weight
    # safetensors by hand (F32, little-endian): 8-byte header length, JSON header, data.
    header, blobs, off = {'__metadata__': {'format': 'pt'}}, [], 0
    for k in sorted(tensors):
        b = tensors[k].detach().float().contiguous().numpy().astype('<f4').tobytes()
        header[k] = {'dtype': 'F32', 'shape': list(tensors[k].shape), 'data_offsets': [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(',', ':')).encode()
    h += b' ' * ((8 - len(h) % 8) % 8)
    with open(os.path.join(out, 'model.safetensors'), 'wb') as f:
        f.write(struct.pack('<Q', len(h)) + h + b''.join(blobs))
    with open(os.path.join(out, 'config.json'), 'w') as f:
        json.dump({
            'architectures': ['LlamaForCausalLM'], 'model_type': 'llama', 'num_hidden_layers': c['layers'], 'hidden_size': c['d'],
            'num_attention_heads': c['heads'], 'num_key_value_heads': c['kv_heads'], 'head_dim': c['head_dim'], 'intermediate_size': c['ffn'],
            'vocab_size': VOCAB, 'rope_theta': c['rope_theta'], 'rms_norm_eps': c['eps'], 'max_position_embeddings': c['max_ctx'],
            'tie_word_embeddings': False, 'hidden_act': 'silu', 'bos_token_id': BOS, 'eos_token_id': IM_END,
        }, f, indent=2)
    with open(os.path.join(out, 'tokenizer.json'), 'w') as f:
        json.dump(byte_tokenizer(), f)
    with open(os.path.join(out, 'tokenizer_config.json'), 'w') as f:
        json.dump({'bos_token': '<|endoftext|>', 'eos_token': '<|im_end|>'}, f)
    meta['files'][name] = {'bytes': os.path.getsize(os.path.join(out, 'model.safetensors'))}


def byte_tokenizer():
    """A byte-level BPE tokenizer.json with no merges: id = byte, then the three specials."""
    bs = list(range(ord('!'), ord('~') + 1)) + list(range(ord('¡'), ord('¬') + 1)) + list(range(ord('®'), ord('ÿ') + 1))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    vocab = {chr(c): b for b, c in zip(bs, cs)}
    return {
        'added_tokens': [{'id': i, 'content': t, 'special': True} for i, t in ((BOS, '<|endoftext|>'), (IM_START, '<|im_start|>'), (IM_END, '<|im_end|>'))],
        'normalizer': None,
        'pre_tokenizer': {'type': 'ByteLevel', 'add_prefix_space': False, 'use_regex': True},
        'model': {'type': 'BPE', 'vocab': vocab, 'merges': []},
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--base-seconds', type=float, default=200)
    ap.add_argument('--ft-seconds', type=float, default=50)
    ap.add_argument('--batch', type=int, default=8)
    ap.add_argument('--seed', type=int, default=1234)
    a = ap.parse_args()
    torch.manual_seed(a.seed)
    # One thread: the machine is shared.
    torch.set_num_threads(1)
    log = lambda s: print(s, flush=True)
    cats = base_categories()
    base_texts = [t for n in cats for t in read_category(n)]
    meta = {
        'corpus': 'Debian package `fortunes` (fortune-mod 1.99.1 data files), /usr/share/games/fortunes',
        'licence': 'BSD (fortune-mod, Copyright (c) 1991 The Regents of the University of California); see /usr/share/doc/fortunes/copyright',
        'architecture': {**CFG, 'vocab': VOCAB, 'tokenizer': 'byte-level, ids 0-255 = bytes, 256 <|endoftext|>, 257 <|im_start|>, 258 <|im_end|>'},
        'seq_len': SEQ, 'batch': a.batch, 'seed': a.seed, 'torch': torch.__version__,
        'base': {'categories': cats, 'fortunes': len(base_texts)}, 'fine_tunes': {}, 'files': {},
    }
    base = Model(CFG)
    log(f'base: {len(base_texts)} fortunes from {len(cats)} categories, {sum(p.numel() for p in base.parameters())} parameters')
    meta['base']['training'] = train(base, base_texts, a.base_seconds, 3e-3, a.seed, a.batch, log)
    meta['base']['eval_loss'] = eval_loss(base, base_texts, a.seed + 1)
    save(base, 'fortune-base', meta)
    for name, cat in FINE_TUNES.items():
        texts = read_category(cat)
        ft = Model(CFG)
        ft.load_state_dict(base.state_dict())
        log(f'{name}: fine-tune on {cat} ({len(texts)} fortunes); base loss there {eval_loss(ft, texts, a.seed + 2)}')
        before = eval_loss(ft, texts, a.seed + 2)
        run = train(ft, texts, a.ft_seconds, 1e-3, a.seed + 3, a.batch, log)
        meta['fine_tunes'][name] = {'category': cat, 'fortunes': len(texts), 'training': run, 'eval_loss_before': before, 'eval_loss_after': eval_loss(ft, texts, a.seed + 2)}
        save(ft, name, meta)
    with open(os.path.join(HERE, 'TRAINING.json'), 'w') as f:
        json.dump(meta, f, indent=2)
    log(json.dumps({k: meta[k] for k in ('base', 'fine_tunes')}, indent=1)[:2000])


if __name__ == '__main__':
    main()
