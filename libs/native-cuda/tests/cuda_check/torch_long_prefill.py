#!/usr/bin/env python3
"""Long-context prefill on the lent GPU, measured with PyTorch at Llama-3.1-8B's shapes (seeded
random bf16 weights): one decoder layer's GEMMs and causal attention at 4K to 128K tokens, and a
question of 128 tokens attending to a cached context. The twin prices both from a roofline; this
is the ground truth it is checked against (bench/results/engine-cuda-prefill.json, folded by
summarize-prefill.mjs). A developer tool for the GPU machines; nothing in Mnemo needs PyTorch.

Every attention backend that runs is timed (flash, cuDNN, memory-efficient), since which one a
serving engine uses decides the figure; GQA's KV heads are expanded to the query heads first so
that every backend accepts the shapes."""
import json
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

QUICK = '--quick' in sys.argv
dev = torch.device('cuda')
torch.manual_seed(20261129)
HIDDEN, HEADS, KV_HEADS, HD, FFN, LAYERS = 4096, 32, 8, 128, 14336, 32
BACKENDS = {'flash': SDPBackend.FLASH_ATTENTION, 'cudnn': SDPBackend.CUDNN_ATTENTION, 'efficient': SDPBackend.EFFICIENT_ATTENTION}


def emit(**kv):
    print(json.dumps(kv), flush=True)


def timed(fn, reps):
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / reps


def weights():
    w = lambda n, k: (torch.rand(n, k, device=dev, dtype=torch.bfloat16) - 0.5) * 0.02
    return {'qkv': w((HEADS + 2 * KV_HEADS) * HD, HIDDEN), 'o': w(HIDDEN, HIDDEN), 'gate_up': w(2 * FFN, HIDDEN), 'down': w(HIDDEN, FFN)}


def gemm_ms(W, n, reps):
    x = torch.rand(n, HIDDEN, device=dev, dtype=torch.bfloat16) - 0.5

    def layer_gemms():
        qkv = x @ W['qkv'].t()
        o = x @ W['o'].t()
        gu = x @ W['gate_up'].t()
        h = F.silu(gu[:, :FFN]) * gu[:, FFN:]
        return qkv, o, h @ W['down'].t()

    t = timed(layer_gemms, reps)
    flops = 2.0 * n * HIDDEN * ((HEADS + 2 * KV_HEADS) * HD + HIDDEN + 2 * FFN) + 2.0 * n * FFN * HIDDEN
    return t, flops


def attention_ms(q_rows, ctx, backend, reps, gqa=False):
    q = torch.rand(1, HEADS, q_rows, HD, device=dev, dtype=torch.bfloat16) - 0.5
    raw = lambda: torch.rand(1, KV_HEADS, ctx, HD, device=dev, dtype=torch.bfloat16) - 0.5
    kv = raw if gqa else (lambda: raw().repeat_interleave(HEADS // KV_HEADS, dim=1))
    k, v = kv(), kv()
    # Causal over the whole prompt; a question attends to all of the cached context and causally to itself.
    if q_rows == ctx:
        fn = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa)
    else:
        mask = torch.ones(q_rows, ctx, device=dev, dtype=torch.bool).tril(ctx - q_rows)
        fn = lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=gqa)
    with sdpa_kernel([BACKENDS[backend]]):
        t = timed(fn, reps)
    # Attended pairs: n(n+1)/2 for a causal prompt; each pair costs 4·hd FLOPs per head (QK and PV).
    pairs = ctx * (ctx + 1) / 2 if q_rows == ctx else q_rows * (ctx - q_rows) + q_rows * (q_rows + 1) / 2
    return t, 4.0 * HEADS * HD * pairs


def gqa_only():
    # The KV heads read as stored (GQA, 8 heads), as a serving engine's kernel reads them: backends that accept it.
    for q_rows, ctx in [(128, 8192 + 128), (128, 32768 + 128), (128, 131072 + 128), (32768, 32768), (131072, 131072)]:
        for name in BACKENDS:
            try:
                ta, fa = attention_ms(q_rows, ctx, name, 3 if q_rows > 4096 else 20, gqa=True)
                emit(kind='gqa_attention', backend=name, q_rows=q_rows, context=ctx, layer_ms=ta * 1e3, tflops=fa / ta / 1e12)
            except Exception as e:
                emit(kind='gqa_attention', backend=name, q_rows=q_rows, context=ctx, error=str(e)[:200])
            torch.cuda.empty_cache()


def main():
    if '--gqa-only' in sys.argv:
        return gqa_only()
    emit(kind='device', name=torch.cuda.get_device_name(0), torch=torch.__version__, cuda=torch.version.cuda, layers=LAYERS)
    W = weights()
    lengths = [4096, 32768] if QUICK else [4096, 8192, 16384, 32768, 65536, 131072]
    for n in lengths:
        reps = 3 if n >= 65536 else 10
        t, flops = gemm_ms(W, n, reps)
        emit(kind='prefill_gemms', tokens=n, layer_ms=t * 1e3, tflops=flops / t / 1e12)
        for name in BACKENDS:
            try:
                ta, fa = attention_ms(n, n, name, reps)
                emit(kind='prefill_attention', backend=name, tokens=n, layer_ms=ta * 1e3, tflops=fa / ta / 1e12)
            except Exception as e:  # a backend that refuses these shapes is recorded, not fatal
                emit(kind='prefill_attention', backend=name, tokens=n, error=str(e)[:200])
            torch.cuda.empty_cache()
    for ctx in ([32768] if QUICK else [8192, 32768, 131072]):
        t, flops = gemm_ms(W, 128, 20)
        emit(kind='question_gemms', tokens=128, layer_ms=t * 1e3, tflops=flops / t / 1e12)
        for name in BACKENDS:
            try:
                ta, fa = attention_ms(128, ctx + 128, name, 20)
                emit(kind='question_attention', backend=name, context=ctx, q_rows=128, layer_ms=ta * 1e3, tflops=fa / ta / 1e12)
            except Exception as e:
                emit(kind='question_attention', backend=name, context=ctx, q_rows=128, error=str(e)[:200])
            torch.cuda.empty_cache()
    gqa_only()


if __name__ == '__main__':
    main()
