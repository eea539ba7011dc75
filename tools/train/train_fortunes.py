#!/usr/bin/env python3
"""Trains the small Llama-family models Mnemo ships (a developer tool, never a runtime
dependency): a byte-level BPE tokenizer on Debian's `fortunes` corpus, a base model on every
category but two, then a full-parameter fine-tune of it per held-out category, each with the
learning rate and step count that minimise its own held-out loss.

    /usr/bin/python3 tools/train/train_fortunes.py [--base-minutes 55] [--ckpt /work/ckpt/fortunes]

Installs its Debian packages when missing, refuses to run on the reference BLAS, prints
progress, checkpoints outside the work tree and resumes from there when rerun. Writes
tools/train/models/<name>/ (Hugging Face layout, BF16), tools/train/splits/ (held-out text),
tools/train/reference-logits.json (what the engine must reproduce) and TRAINING.json.
"""
import os
import subprocess
import sys

# Idle OpenMP threads must sleep, not spin: on a shared 2-core machine two spinning threads
# measured 5x slower per step than one. Set before libgomp loads (with torch).
os.environ.setdefault('OMP_WAIT_POLICY', 'PASSIVE')
PACKAGES = ['python3-torch', 'libopenblas0-openmp', 'fortunes', 'wamerican', 'python3-regex']


def ensure_packages():
    missing = [p for p in PACKAGES if subprocess.run(['dpkg', '-s', p], capture_output=True).returncode != 0]
    if not missing:
        return
    print(f'installing {" ".join(missing)} with apt-get', flush=True)
    if os.geteuid() != 0:
        sys.exit(f'missing Debian packages {missing}; run: sudo apt-get install -y {" ".join(missing)}')
    env = {**os.environ, 'DEBIAN_FRONTEND': 'noninteractive'}
    subprocess.run(['apt-get', 'update', '-qq'], check=True, env=env)
    subprocess.run(['apt-get', 'install', '-y', '-qq', *missing], check=True, env=env)


ensure_packages()

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import random  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bpe import Bpe, train_bpe  # noqa: E402
from data import FINE_TUNES, Batches, Encoder, build_splits, write_split  # noqa: E402
from model import Model, export, round_bf16_  # noqa: E402

CFG = dict(layers=8, d=192, heads=6, kv_heads=2, head_dim=32, ffn=512, vocab=4096, rope_theta=10000.0, eps=1e-5, max_ctx=4096)
# (start of the phase as a fraction of the base's time budget, batch, window): mostly short
# windows for speed, then long ones so a 2,000-token chat and the full 4,096 context are seen.
PHASES = [(0.0, 8, 256), (0.70, 2, 1024), (0.85, 1, 2048), (0.95, 1, 4096)]
FT_LRS = [1e-4, 3e-4, 1e-3]
FT_BATCH, FT_SEQ, FT_MAX_STEPS, FT_EVAL_EVERY, FT_PATIENCE = 4, 256, 150, 10, 2
CHAT_PROMPTS = ['Tell me a fortune.', 'What do you think about computers?', 'Hello! How are you today?', 'Give me some advice about love.']


def log(s):
    print(s, flush=True)


def check_blas():
    """The BLAS torch runs on, refusing the reference one, and a 1024x1024 matmul's GFLOP/s."""
    a, b = torch.randn(1024, 1024), torch.randn(1024, 1024)
    a @ b
    with open('/proc/self/maps') as f:
        libs = sorted({line.split()[-1] for line in f if 'blas' in line.lower() and '/' in line})
    if not any('openblas' in p for p in libs):
        sys.exit('refusing to train on the reference BLAS (' + (', '.join(libs) or 'no BLAS library mapped') + '): install libopenblas0-openmp'
                 ' and select it: update-alternatives --set libblas.so.3-x86_64-linux-gnu /usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3')
    for _ in range(3):
        a @ b
    n, t = 20, time.time()
    for _ in range(n):
        a @ b
    return {'libraries': libs, 'matmul_1024_gflops': round(2 * 1024 ** 3 * n / (time.time() - t) / 1e9, 1), 'threads': torch.get_num_threads()}


def lr_at(progress, peak):
    warm = 0.02
    if progress < warm:
        return peak * progress / warm
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, (progress - warm) / (1 - warm)))))


def optimizer(model, lr, wd):
    decay = [p for p in model.parameters() if p.dim() >= 2]
    rest = [p for p in model.parameters() if p.dim() < 2]
    return torch.optim.AdamW([{'params': decay, 'weight_decay': wd}, {'params': rest, 'weight_decay': 0.0}], lr=lr, betas=(0.9, 0.95))


def step(model, opt, x, y):
    loss = F.cross_entropy(model(x).reshape(-1, model.c['vocab']), y.reshape(-1))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    return loss.item()


@torch.no_grad()
def bits_per_byte(model, enc, texts, window=1024, max_windows=None):
    """Held-out bits per UTF-8 byte of plain text: each fortune as <|endoftext|> + text, in one
    stream cut into windows; every next-token loss counts, divided by the text's bytes."""
    model.eval()
    stream = [t for x in texts for t in enc.plain(x)] + [enc.bpe.bos]
    nbytes = sum(len(x.encode('utf-8')) for x in texts)
    nll, ntok, at = 0.0, 0, 0
    while at + 1 < len(stream) and (max_windows is None or at // window < max_windows):
        chunk = torch.tensor(stream[at:at + window + 1]).unsqueeze(0)
        logits = model(chunk[:, :-1])
        nll += F.cross_entropy(logits.reshape(-1, model.c['vocab']), chunk[:, 1:].reshape(-1), reduction='sum').item()
        ntok += chunk.shape[1] - 1
        at += window
    model.train()
    if max_windows is not None:
        nbytes = nbytes * ntok / (len(stream) - 1)
    return round(nll / math.log(2) / nbytes, 4)


def save_atomic(obj, path):
    torch.save(obj, path + '.tmp')
    os.replace(path + '.tmp', path)


def tokenizer(splits, ckpt, vocab):
    path = os.path.join(ckpt, f'tokenizer-{vocab}.json')
    if os.path.exists(path):
        return Bpe.from_tokenizer_json(path)
    texts = splits['base']['train'] + [t for n in FINE_TUNES for t in splits[n]['train']]
    t0 = time.time()
    log(f'tokenizer: training byte-level BPE, vocabulary {vocab}, on {len(texts)} training fortunes')
    bpe = Bpe(train_bpe(texts, vocab, log))
    with open(path, 'w', encoding='utf-8') as f:
        json.dump(bpe.tokenizer_json(), f, ensure_ascii=False)
    log(f'tokenizer: done in {time.time() - t0:.0f}s')
    with open(path + '.seconds', 'w') as f:
        f.write(f'{time.time() - t0:.1f}')
    return bpe


def train_base(a, splits, enc):
    path = os.path.join(a.ckpt, 'base.pt')
    model = Model({**CFG, 'vocab': enc.bpe.vocab_size})
    opt = optimizer(model, a.base_lr, 0.1)
    state = {'elapsed': 0.0, 'step': 0, 'batches': {'epoch': 0, 'pos': 0}, 'evals': [], 'done': False, 'tokens': 0}
    if os.path.exists(path):
        ck = torch.load(path)
        model.load_state_dict(ck['model'])
        opt.load_state_dict(ck['opt'])
        state = ck['state']
        log(f'base: resumed at step {state["step"]} ({state["elapsed"]:.0f}s of {a.base_minutes * 60:.0f}s)')
    if state['done']:
        return model, state
    texts = splits['base']['train']
    log(f'base: {len(texts)} fortunes, {sum(p.numel() for p in model.parameters())} parameters, budget {a.base_minutes} min')
    batches = Batches(texts, enc, a.seed, **state['batches'])
    budget, ema, last_ck, last_eval = a.base_minutes * 60, None, time.time(), state['elapsed']
    while state['elapsed'] < budget:
        t0 = time.time()
        progress = state['elapsed'] / budget
        B, T = [(b, t) for start, b, t in PHASES if progress >= start][-1]
        for g in opt.param_groups:
            g['lr'] = lr_at(progress, a.base_lr)
        loss = step(model, opt, *batches.next(B, T))
        ema = loss if ema is None else 0.95 * ema + 0.05 * loss
        state['step'] += 1
        state['tokens'] += B * T
        state['elapsed'] += time.time() - t0
        if state['step'] % 10 == 0:
            log(f'base: step {state["step"]:5d}  {100 * progress:5.1f}%  T={T:4d}  loss {ema:.3f} nats/token  '
                f'{B * T / (time.time() - t0):5.0f} tok/s  epoch {batches.epoch}  {state["elapsed"] / 60:.1f} min')
        if state['elapsed'] - last_eval > 300:
            last_eval = state['elapsed']
            t1 = time.time()
            bpb = bits_per_byte(model, enc, splits['base']['heldout'], max_windows=12)
            state['evals'].append({'step': state['step'], 'minutes': round(state['elapsed'] / 60, 1), 'heldout_bpb_sample': bpb})
            log(f'base: held-out sample {bpb} bits/byte ({time.time() - t1:.0f}s)')
        state['batches'] = batches.state()
        if time.time() - last_ck > 180 or state['elapsed'] >= budget:
            state['done'] = state['elapsed'] >= budget
            save_atomic({'model': model.state_dict(), 'opt': opt.state_dict(), 'state': state}, path)
            last_ck = time.time()
    return model, state


def fine_tune(a, name, splits, enc, base_state):
    """Full-parameter fine-tunes from the shipped (bf16) base at each of FT_LRS, constant lr
    after a short warm-up, evaluated on the category's validation split every FT_EVAL_EVERY
    steps and stopped after FT_PATIENCE evaluations without improvement; the best (lr, step)
    over all runs wins. Each finished run is checkpointed, so a rerun resumes the search."""
    texts, val = splits[name]['train'], splits[name]['val']
    runs = []
    best = None
    for lr in FT_LRS:
        path = os.path.join(a.ckpt, f'{name}-lr{lr:g}.pt')
        if os.path.exists(path):
            ck = torch.load(path)
            runs.append(ck['run'])
            log(f'{name}: lr {lr:g} done earlier: best {ck["run"]["best_bpb"]} bits/byte at step {ck["run"]["best_step"]}')
        else:
            model = Model({**CFG, 'vocab': enc.bpe.vocab_size})
            model.load_state_dict(base_state)
            opt = optimizer(model, lr, 0.1)
            batches = Batches(texts, enc, a.seed + 7)
            curve = [{'step': 0, 'val_bpb': bits_per_byte(model, enc, val)}]
            best_state, since, t0 = {k: v.clone() for k, v in model.state_dict().items()}, 0, time.time()
            for s in range(1, a.ft_max_steps + 1):
                for g in opt.param_groups:
                    g['lr'] = lr * min(1.0, s / 10)
                step(model, opt, *batches.next(FT_BATCH, FT_SEQ))
                if s % FT_EVAL_EVERY == 0:
                    bpb = bits_per_byte(model, enc, val)
                    curve.append({'step': s, 'val_bpb': bpb})
                    log(f'{name}: lr {lr:g} step {s:4d}  val {bpb} bits/byte  ({time.time() - t0:.0f}s)')
                    if bpb < min(c['val_bpb'] for c in curve[:-1]):
                        best_state, since = {k: v.clone() for k, v in model.state_dict().items()}, 0
                    else:
                        since += 1
                        if since >= FT_PATIENCE:
                            break
            top = min(curve, key=lambda c: c['val_bpb'])
            run = {'lr': lr, 'curve': curve, 'best_step': top['step'], 'best_bpb': top['val_bpb'], 'seconds': round(time.time() - t0, 1)}
            save_atomic({'run': run, 'model': best_state}, path)
            runs.append(run)
        if best is None or runs[-1]['best_bpb'] < best[0]['best_bpb']:
            best = (runs[-1], path)
    chosen = torch.load(best[1])['model']
    model = Model({**CFG, 'vocab': enc.bpe.vocab_size})
    model.load_state_dict(chosen)
    return model, {'search': runs, 'lr': best[0]['lr'], 'steps': best[0]['best_step'], 'val_bpb': best[0]['best_bpb']}


@torch.no_grad()
def sample_chat(model, enc, prompt, temperature, seed, max_new=80):
    model.eval()
    ids = enc.chat([('user', prompt)]) + [enc.bpe.im_start] + enc.bpe.encode('assistant\n')
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(max_new):
        logits = model(torch.tensor([ids + out]))[0, -1]
        t = int(logits.argmax()) if temperature == 0 else int(torch.multinomial(torch.softmax(logits / temperature, -1), 1, generator=g))
        if t == enc.bpe.im_end:
            break
        out.append(t)
    return enc.bpe.decode(out)


@torch.no_grad()
def reference_logits(model, enc):
    """A fixture the engine spec replays: the trainer's token ids for a chat and the base's
    logits at its last position, with the weights as stored (bf16)."""
    messages = [('system', 'You are a helpful assistant.'), ('user', 'Tell me something about computers.'),
                ('assistant', 'Computers are useless. They can only give you answers.\n\t\t-- Pablo Picasso'),
                ('user', "That's funny! Can you tell me one about cats, dogs and 42 other things?")]
    ids = enc.chat(messages) + [enc.bpe.im_start] + enc.bpe.encode('assistant\n')
    model.eval()
    logits = model(torch.tensor([ids]))[0, -1]
    return {'model': 'fortune-base', 'messages': [{'role': r, 'content': c} for r, c in messages], 'tokens': ids,
            'last_logits': [round(float(v), 6) for v in logits]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--base-minutes', type=float, default=80)
    ap.add_argument('--base-lr', type=float, default=3e-3)
    ap.add_argument('--ckpt', default='/work/ckpt/fortunes')
    ap.add_argument('--out', default=HERE)
    ap.add_argument('--seed', type=int, default=1234)
    ap.add_argument('--ft-max-steps', type=int, default=FT_MAX_STEPS)
    a = ap.parse_args()
    torch.set_num_threads(2)
    torch.manual_seed(a.seed)
    random.seed(a.seed)
    os.makedirs(a.ckpt, exist_ok=True)
    t_start = time.time()
    blas = check_blas()
    log(f'BLAS: {blas}')
    splits = build_splits(a.seed)
    os.makedirs(os.path.join(a.out, 'splits'), exist_ok=True)
    write_split(os.path.join(a.out, 'splits', 'base.heldout.txt'), splits['base']['heldout'])
    for name in FINE_TUNES:
        for part in ('profile', 'test'):
            write_split(os.path.join(a.out, 'splits', f'{name}.{part}.txt'), splits[name][part])
    bpe = tokenizer(splits, a.ckpt, CFG['vocab'])
    enc = Encoder(bpe)
    base, st = train_base(a, splits, enc)
    round_bf16_(base)
    models_dir = os.path.join(a.out, 'models')
    meta = {
        'corpus': 'Debian package `fortunes` (fortune-mod 1.99.1 data files), /usr/share/games/fortunes',
        'licence': 'BSD (fortune-mod, Copyright (c) 1991 The Regents of the University of California); see /usr/share/doc/fortunes/copyright',
        'torch': torch.__version__, 'blas': blas, 'seed': a.seed,
        'architecture': {**CFG, 'vocab': bpe.vocab_size, 'parameters': sum(p.numel() for p in base.parameters()), 'tie_embeddings': True,
                         'storage': 'safetensors BF16'},
        'tokenizer': {'type': 'byte-level BPE (GPT-2 split regex), trained on the training splits', 'vocab': bpe.vocab_size,
                      'merges': len(bpe.merges), 'specials': {'<|endoftext|>': bpe.bos, '<|im_start|>': bpe.im_start, '<|im_end|>': bpe.im_end}},
        'samples': 'half plain fortunes, half ChatML chats of 1-12 turns (30% with a system message) whose answers are fortunes',
        'base': {'categories': splits['base']['categories'], 'train_fortunes': len(splits['base']['train']),
                 'heldout_fortunes': len(splits['base']['heldout']), 'phases': PHASES, 'peak_lr': a.base_lr,
                 'steps': st['step'], 'tokens': st['tokens'], 'train_minutes': round(st['elapsed'] / 60, 1), 'evals': st['evals']},
        'fine_tunes': {}, 'files': {},
    }
    meta['base']['heldout_bpb'] = bits_per_byte(base, enc, splits['base']['heldout'])
    log(f'base: held-out {meta["base"]["heldout_bpb"]} bits/byte')
    meta['files']['fortune-base'] = export(base, bpe, os.path.join(models_dir, 'fortune-base'))
    base_state = {k: v.clone() for k, v in base.state_dict().items()}
    with open(os.path.join(a.out, 'reference-logits.json'), 'w') as f:
        json.dump(reference_logits(base, enc), f)
    models = {'fortune-base': base}
    for name in FINE_TUNES:
        ft, rec = fine_tune(a, name, splits, enc, base_state)
        round_bf16_(ft)
        rec.update({'category': splits[name]['categories'][0], 'train_fortunes': len(splits[name]['train']),
                    **{f'{p}_fortunes': len(splits[name][p]) for p in ('val', 'profile', 'test')}})
        rec['test_bpb'] = bits_per_byte(ft, enc, splits[name]['test'])
        rec['base_test_bpb'] = bits_per_byte(base, enc, splits[name]['test'])
        log(f'{name}: lr {rec["lr"]:g}, {rec["steps"]} steps; test {rec["test_bpb"]} bits/byte (base {rec["base_test_bpb"]})')
        meta['fine_tunes'][name] = rec
        meta['files'][name] = export(ft, bpe, os.path.join(models_dir, name))
        models[name] = ft
    meta['samples_greedy'] = {n: {p: sample_chat(m, enc, p, 0, 0) for p in CHAT_PROMPTS} for n, m in models.items()}
    for n, s in meta['samples_greedy'].items():
        log(f'{n}: {json.dumps(s, indent=1)}')
    tok_s = os.path.join(a.ckpt, f'tokenizer-{CFG["vocab"]}.json.seconds')
    phases = {'tokenizer': float(open(tok_s).read()) if os.path.exists(tok_s) else None, 'base': round(st['elapsed'], 1),
              **{n: sum(r['seconds'] for r in meta['fine_tunes'][n]['search']) for n in FINE_TUNES}}
    meta['training_seconds'] = {**phases, 'total': round(sum(v for v in phases.values() if v), 1)}
    meta['wall_minutes_last_run'] = round((time.time() - t_start) / 60, 1)
    meta['files']['total_bytes'] = sum(v for k, v in meta['files'].items())
    with open(os.path.join(a.out, 'TRAINING.json'), 'w') as f:
        json.dump(meta, f, indent=2)
    log(f'done: {meta["training_seconds"]} s of training; this run {meta["wall_minutes_last_run"]} min')


if __name__ == '__main__':
    main()
