#!/usr/bin/env python3
"""LoRA fine-tunes of the shipped fortune-base (a developer tool, never a runtime dependency).

    nice -n 10 /usr/bin/python3 tools/train/train_lora.py [--only fortune-lora-computers] [--max-steps 60]
    # the search's runs in parallel, then the export (reads their checkpoints):
    ... train_lora.py --only NAME --point 4:0.003 --threads 1 &  (one per rank:lr) ... ; train_lora.py --only NAME

The common recipe: rank-r adapters on the attention projections q/k/v/o (lora_alpha = 2r,
dropout 0.05, A Kaiming-uniform, B zero), the base frozen at its shipped bf16 weights. For each
category the rank and learning rate are searched (LORA_RANKS x LORA_LRS), each run evaluated on
the category's own validation split every FT_EVAL_EVERY steps and stopped after FT_PATIENCE
evaluations without improvement; the (rank, lr, step) with the lowest validation bits per byte
wins. The whole search is written to TRAINING.json (`lora_adapters.<name>`) before any DroidSpeak
profiling, so nothing but the adapter's own held-out loss picks its hyper-parameters.

Writes tools/train/models/<name>/ in PEFT's layout: adapter_config.json (peft_type LORA,
base_model_name_or_path the sibling base directory), adapter_model.safetensors (F32, PEFT names
base_model.model.model.layers.<i>.self_attn.<q|k|v|o>_proj.lora_<A|B>.weight) and the base's
tokenizer files. The engine merges an adapter into its base when it loads one.
"""
import argparse
import json
import math
import os
import random
import shutil
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from train_fortunes import CFG, FT_BATCH, FT_EVAL_EVERY, FT_PATIENCE, FT_SEQ, bits_per_byte, check_blas, log  # noqa: E402

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from bpe import Bpe  # noqa: E402
from data import Batches, Encoder, build_splits, read_category, write_split  # noqa: E402
from model import Model, write_safetensors  # noqa: E402

LORA_RANKS = [4, 16]
LORA_LRS = [3e-3, 1e-2]
LORA_DROPOUT = 0.05
MAX_STEPS = 60
TARGETS = ['q_proj', 'k_proj', 'v_proj', 'o_proj']
# Adapter name -> category. computers and songs-poems are the full fine-tunes' categories (unseen
# by the base, same splits); the third is a category the base trained on, see `extra_category`.
ADAPTERS = {'fortune-lora-computers': 'computers', 'fortune-lora-songs': 'songs-poems'}
EXTRA_CATEGORY = 'definitions'


class LoraFused(nn.Module):
    """A frozen linear layer plus one rank-r update per output slice (q, k, v fused in one
    linear while training): y = W x + (alpha / r) B_s A_s x for each slice s, dropout on x."""

    def __init__(self, base, names, sizes, r, alpha):
        super().__init__()
        self.base, self.names, self.sizes, self.scale = base, names, sizes, alpha / r
        for p in base.parameters():
            p.requires_grad_(False)
        self.A = nn.ParameterList()
        self.B = nn.ParameterList()
        for n in sizes:
            a = torch.empty(r, base.in_features)
            nn.init.kaiming_uniform_(a, a=math.sqrt(5))
            self.A.append(nn.Parameter(a))
            self.B.append(nn.Parameter(torch.zeros(n, r)))
        self.drop = nn.Dropout(LORA_DROPOUT)

    def forward(self, x):
        h = self.drop(x)
        delta = torch.cat([(h @ a.t()) @ b.t() for a, b in zip(self.A, self.B)], dim=-1)
        return self.base(x) + self.scale * delta


def load_base(path, vocab):
    """fortune-base from its shipped model.safetensors (BF16), into the trainer's fused layout."""
    with open(path, 'rb') as f:
        n = struct.unpack('<Q', f.read(8))[0]
        header = json.loads(f.read(n))
        blob = f.read()
    t = {}
    for k, e in header.items():
        if k == '__metadata__':
            continue
        b, end = e['data_offsets']
        assert e['dtype'] == 'BF16', f'{k}: {e["dtype"]}'
        raw = torch.frombuffer(bytearray(blob[b:end]), dtype=torch.int16)
        t[k] = (raw.to(torch.int32) << 16).view(torch.float32).reshape(e['shape']).clone()
    model = Model({**CFG, 'vocab': vocab})
    sd = {'embed_tokens.weight': t['model.embed_tokens.weight'], 'norm.weight': t['model.norm.weight']}
    for i in range(CFG['layers']):
        p = f'model.layers.{i}.'
        sd.update({
            f'layers.{i}.input_layernorm.weight': t[p + 'input_layernorm.weight'],
            f'layers.{i}.post_attention_layernorm.weight': t[p + 'post_attention_layernorm.weight'],
            f'layers.{i}.qkv.weight': torch.cat([t[p + f'self_attn.{m}_proj.weight'] for m in 'qkv']),
            f'layers.{i}.o_proj.weight': t[p + 'self_attn.o_proj.weight'],
            f'layers.{i}.gate_up.weight': torch.cat([t[p + 'mlp.gate_proj.weight'], t[p + 'mlp.up_proj.weight']]),
            f'layers.{i}.down_proj.weight': t[p + 'mlp.down_proj.weight'],
        })
    model.load_state_dict(sd)
    return model


def attach(model, r):
    c = model.c
    H, KV, hd = c['heads'], c['kv_heads'], c['head_dim']
    for p in model.parameters():
        p.requires_grad_(False)
    for layer in model.layers:
        layer.qkv = LoraFused(layer.qkv, ['q_proj', 'k_proj', 'v_proj'], [H * hd, KV * hd, KV * hd], r, 2 * r)
        layer.o_proj = LoraFused(layer.o_proj, ['o_proj'], [c['d']], r, 2 * r)
    return [p for p in model.parameters() if p.requires_grad]


def adapter_tensors(model):
    out = {}
    for i, layer in enumerate(model.layers):
        for mod in (layer.qkv, layer.o_proj):
            for name, a, b in zip(mod.names, mod.A, mod.B):
                p = f'base_model.model.model.layers.{i}.self_attn.{name}.'
                out[p + 'lora_A.weight'] = a.detach().clone()
                out[p + 'lora_B.weight'] = b.detach().clone()
    return out


def export_adapter(tensors, r, models_dir, name):
    out = os.path.join(models_dir, name)
    os.makedirs(out, exist_ok=True)
    write_safetensors(os.path.join(out, 'adapter_model.safetensors'), tensors, 'F32')
    with open(os.path.join(out, 'adapter_config.json'), 'w') as f:
        json.dump({'peft_type': 'LORA', 'task_type': 'CAUSAL_LM', 'base_model_name_or_path': 'fortune-base', 'r': r, 'lora_alpha': 2 * r,
                   'lora_dropout': LORA_DROPOUT, 'target_modules': TARGETS, 'bias': 'none', 'fan_in_fan_out': False}, f, indent=2)
    for f in ('tokenizer.json', 'tokenizer_config.json'):
        shutil.copyfile(os.path.join(models_dir, 'fortune-base', f), os.path.join(out, f))
    return sum(os.path.getsize(os.path.join(out, n)) for n in os.listdir(out))


def extra_category(splits, cat, seed):
    """A category the base trained on (its held-out share is too small for 2,176-token windows):
    validation is the category's fortunes in the base's held-out split (seen by neither model);
    profiling and test are 8% each of its base-training fortunes by a seeded shuffle (seen by the
    base in pre-training, never by the adapter); the adapter trains on the rest."""
    mine = set(read_category(cat))
    pool = [t for t in splits['base']['train'] if t in mine]
    random.Random(seed + 43).shuffle(pool)
    k = int(len(pool) * 0.08)
    return {'categories': [cat], 'val': [t for t in splits['base']['heldout'] if t in mine],
            'profile': pool[:k], 'test': pool[k:2 * k], 'train': pool[2 * k:]}


def run(a, base_path, enc, texts, val, r, lr):
    torch.manual_seed(a.seed)
    model = load_base(base_path, enc.bpe.vocab_size)
    params = attach(model, r)
    opt = torch.optim.AdamW(params, lr=lr, betas=(0.9, 0.95), weight_decay=0.0)
    batches = Batches(texts, enc, a.seed + 7)
    curve = [{'step': 0, 'val_bpb': bits_per_byte(model, enc, val)}]
    best, since, t0 = adapter_tensors(model), 0, time.time()
    for s in range(1, a.max_steps + 1):
        for g in opt.param_groups:
            g['lr'] = lr * min(1.0, s / 10)
        x, y = batches.next(FT_BATCH, FT_SEQ)
        loss = F.cross_entropy(model(x).reshape(-1, model.c['vocab']), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        if s % FT_EVAL_EVERY == 0:
            bpb = bits_per_byte(model, enc, val)
            curve.append({'step': s, 'val_bpb': bpb})
            log(f'r {r} lr {lr:g} step {s:4d}  val {bpb} bits/byte  ({time.time() - t0:.0f}s)')
            if bpb < min(c['val_bpb'] for c in curve[:-1]):
                best, since = adapter_tensors(model), 0
            else:
                since += 1
                if since >= FT_PATIENCE:
                    break
    top = min(curve, key=lambda c: c['val_bpb'])
    return {'rank': r, 'lr': lr, 'curve': curve, 'best_step': top['step'], 'best_bpb': top['val_bpb'], 'seconds': round(time.time() - t0, 1)}, best


def merged_model(base_path, enc, tensors, r):
    """The base with the adapter merged (W + alpha/r B A, fp32), as the engine serves it."""
    model = load_base(base_path, enc.bpe.vocab_size)
    c, scale = model.c, 2.0
    with torch.no_grad():
        for i, layer in enumerate(model.layers):
            p = f'base_model.model.model.layers.{i}.self_attn.'
            d = [tensors[p + f'{m}_proj.lora_B.weight'] @ tensors[p + f'{m}_proj.lora_A.weight'] for m in 'qkv']
            layer.qkv.weight += scale * torch.cat(d)
            layer.o_proj.weight += scale * tensors[p + 'o_proj.lora_B.weight'] @ tensors[p + 'o_proj.lora_A.weight']
    assert c['layers'] == len(model.layers)
    return model


def read_adapter(models_dir, name):
    """An exported adapter's tensors (F32) and its config, as the engine reads them."""
    d = os.path.join(models_dir, name)
    with open(os.path.join(d, 'adapter_model.safetensors'), 'rb') as f:
        n = struct.unpack('<Q', f.read(8))[0]
        header = json.loads(f.read(n))
        blob = f.read()
    t = {}
    for k, e in header.items():
        if k != '__metadata__':
            b, end = e['data_offsets']
            t[k] = torch.frombuffer(bytearray(blob[b:end]), dtype=torch.float32).reshape(e['shape']).clone()
    with open(os.path.join(d, 'adapter_config.json')) as f:
        return t, json.load(f)


@torch.no_grad()
def reference_logits(a, models_dir, enc, name):
    """A fixture the engine spec replays: the base's reference chat through the adapter merged
    as the trainer merges it, last-position logits (reference-logits-lora.json)."""
    with open(os.path.join(a.out, 'reference-logits.json')) as f:
        ref = json.load(f)
    tensors, cfg = read_adapter(models_dir, name)
    assert cfg['lora_alpha'] == 2 * cfg['r']
    model = merged_model(os.path.join(models_dir, 'fortune-base', 'model.safetensors'), enc, tensors, cfg['r'])
    model.eval()
    logits = model(torch.tensor([ref['tokens']]))[0, -1]
    out = {**ref, 'model': name, 'last_logits': [round(float(v), 6) for v in logits]}
    with open(os.path.join(a.out, 'reference-logits-lora.json'), 'w') as f:
        json.dump(out, f)
    log(f'{name}: wrote reference-logits-lora.json')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--out', default=HERE)
    ap.add_argument('--seed', type=int, default=1234)
    ap.add_argument('--max-steps', type=int, default=MAX_STEPS)
    ap.add_argument('--only', action='append')
    ap.add_argument('--point', help='run only this search point, rank:lr (e.g. 4:0.003), and checkpoint it')
    ap.add_argument('--ckpt', default='/work/ckpt/lora')
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--reference-logits', metavar='NAME', help='only write reference-logits-lora.json for the exported adapter NAME')
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    os.makedirs(a.ckpt, exist_ok=True)
    random.seed(a.seed)
    blas = check_blas()
    log(f'BLAS: {blas}')
    models_dir = os.path.join(a.out, 'models')
    base_path = os.path.join(models_dir, 'fortune-base', 'model.safetensors')
    enc = Encoder(Bpe.from_tokenizer_json(os.path.join(models_dir, 'fortune-base', 'tokenizer.json')))
    if a.reference_logits:
        return reference_logits(a, models_dir, enc, a.reference_logits)
    splits = build_splits(a.seed)
    cats = {**ADAPTERS, f'fortune-lora-{EXTRA_CATEGORY}': EXTRA_CATEGORY}
    base_model = load_base(base_path, enc.bpe.vocab_size)
    for name, cat in cats.items():
        if a.only and name not in a.only:
            continue
        if cat == EXTRA_CATEGORY:
            sp = extra_category(splits, cat, a.seed)
            split_name = name
            for part in ('profile', 'test'):
                write_split(os.path.join(a.out, 'splits', f'{name}.{part}.txt'), sp[part])
        else:
            full = next(n for n, s in splits.items() if s.get('categories') == [cat])
            sp, split_name = splits[full], full
        log(f'{name}: {cat}, {len(sp["train"])} training fortunes, {len(sp["val"])} validation')
        runs, best = [], None
        for r in LORA_RANKS:
            for lr in LORA_LRS:
                if a.point and a.point != f'{r}:{lr:g}':
                    continue
                # Each finished search run is checkpointed outside the work tree: runs can go in
                # parallel processes (--point) and a rerun resumes the search.
                path = os.path.join(a.ckpt, f'{name}-r{r}-lr{lr:g}-s{a.max_steps}.pt')
                if os.path.exists(path):
                    ck = torch.load(path)
                    rec, tensors = ck['run'], ck['tensors']
                    log(f'{name}: rank {r} lr {lr:g} done earlier: best {rec["best_bpb"]} at step {rec["best_step"]}')
                else:
                    rec, tensors = run(a, base_path, enc, sp['train'], sp['val'], r, lr)
                    torch.save({'run': rec, 'tensors': tensors}, path + '.tmp')
                    os.replace(path + '.tmp', path)
                runs.append(rec)
                if best is None or rec['best_bpb'] < best[0]['best_bpb']:
                    best = (rec, tensors)
        if a.point:
            continue
        rec, tensors = best
        merged = merged_model(base_path, enc, tensors, rec['rank'])
        out = {'category': cat, 'recipe': {'target_modules': TARGETS, 'lora_alpha': '2 x rank', 'lora_dropout': LORA_DROPOUT,
                                           'batch': FT_BATCH, 'seq': FT_SEQ, 'warmup_steps': 10, 'ranks': LORA_RANKS, 'lrs': LORA_LRS,
                                           'max_steps': a.max_steps, 'eval_every': FT_EVAL_EVERY, 'patience': FT_PATIENCE},
               'search': runs, 'rank': rec['rank'], 'lr': rec['lr'], 'steps': rec['best_step'], 'val_bpb': rec['best_bpb'],
               'splits': split_name, 'train_fortunes': len(sp['train']),
               **{f'{p}_fortunes': len(sp[p]) for p in ('val', 'profile', 'test')},
               'adapter_parameters': sum(t.numel() for t in tensors.values()),
               'test_bpb': bits_per_byte(merged, enc, sp['test']), 'base_test_bpb': bits_per_byte(base_model, enc, sp['test'])}
        out['bytes'] = export_adapter(tensors, rec['rank'], models_dir, name)
        log(f'{name}: rank {rec["rank"]} lr {rec["lr"]:g} {rec["best_step"]} steps; test {out["test_bpb"]} (base {out["base_test_bpb"]})')
        path = os.path.join(a.out, 'TRAINING.json')
        with open(path) as f:
            meta = json.load(f)
        meta.setdefault('lora_adapters', {})[name] = out
        with open(path, 'w') as f:
            json.dump(meta, f, indent=2)


if __name__ == '__main__':
    main()
