#!/usr/bin/env python3
"""The PyTorch peer of mnemo_cuda_check --perf on the same GPU: torch.matmul in bf16 at
Llama-3.1-8B's GEMM shapes, scaled_dot_product_attention at the same attention configs, and a
plain pinned host<->device copy. One JSON line per measurement (summarize.mjs pairs them with
the harness's lines). A developer tool for the GPU machines; nothing in Mnemo needs PyTorch."""
import json
import sys
import time

import torch
import torch.nn.functional as F

QUICK = '--quick' in sys.argv
dev = torch.device('cuda')


def emit(**kv):
    print(json.dumps(kv), flush=True)


def per_rep(fn, target_s=0.05, cap=200):
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    once = time.perf_counter() - t0
    reps = max(3, min(cap, int(target_s / max(once, 1e-6))))
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / reps


def gemm():
    shapes = [('qkv', 6144, 4096), ('o', 4096, 4096), ('gate_up', 28672, 4096), ('down', 4096, 14336)]
    ms = [1, 2048] if QUICK else [1, 16, 64, 512, 2048]
    for name, n, k in shapes:
        w = (torch.rand(n, k, device=dev, dtype=torch.bfloat16) - 0.5) * 0.1
        for m in ms:
            x = torch.rand(m, k, device=dev, dtype=torch.bfloat16) * 2 - 1
            t = per_rep(lambda: torch.matmul(x, w.t()))
            emit(kind='torch_gemm', shape=name, m=m, n=n, k=k, ms=t * 1e3, tflops=2.0 * m * n * k / t / 1e12)


def attention():
    heads, kv_heads, hd = 32, 8, 128
    ctxs = [1024, 8192] if QUICK else [1024, 4096, 16384, 32768]
    try:
        from torch.nn.attention.bias import causal_lower_right
    except ImportError:  # older torch: an explicit bottom-right mask
        causal_lower_right = None
    for mode in ('decode', 'prefill'):
        for ctx in ctxs:
            seqs, qlen = (8, 1) if mode == 'decode' else (1, min(512, ctx))
            q = torch.rand(seqs, heads, qlen, hd, device=dev, dtype=torch.bfloat16) * 2 - 1
            k = torch.rand(seqs, kv_heads, ctx, hd, device=dev, dtype=torch.bfloat16) * 2 - 1
            v = torch.rand(seqs, kv_heads, ctx, hd, device=dev, dtype=torch.bfloat16) * 2 - 1
            if qlen == 1:
                mask = None
            elif causal_lower_right is not None:
                mask = causal_lower_right(qlen, ctx)
            else:
                mask = torch.ones(qlen, ctx, device=dev, dtype=torch.bool).tril(ctx - qlen)
            try:
                fn = lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)
                fn()
                gqa = 'enable_gqa'
            except TypeError:
                kr, vr = k.repeat_interleave(heads // kv_heads, 1), v.repeat_interleave(heads // kv_heads, 1)
                fn = lambda: F.scaled_dot_product_attention(q, kr, vr, attn_mask=mask)
                gqa = 'repeat_interleave'
            t = per_rep(fn, target_s=0.1)
            kv_bytes = 2.0 * seqs * ctx * kv_heads * hd * 2
            emit(kind='torch_attention', mode=mode, ctx=ctx, seqs=seqs, q_rows=qlen, ms=t * 1e3,
                 kv_gbs=kv_bytes / t / 1e9, gqa=gqa)
            del q, k, v


def copies():
    n = 1 << 30
    host = torch.empty(n, dtype=torch.uint8, pin_memory=True)
    host.fill_(1)
    devbuf = torch.empty(n, dtype=torch.uint8, device=dev)
    for direction in ('h2d', 'd2h'):
        best = 1e30
        for _ in range(3):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            if direction == 'h2d':
                devbuf.copy_(host, non_blocking=True)
            else:
                host.copy_(devbuf, non_blocking=True)
            torch.cuda.synchronize()
            best = min(best, time.perf_counter() - t0)
        emit(kind='torch_copy', dir=direction, bytes=n, gbs=n / best / 1e9)


def main():
    p = torch.cuda.get_device_properties(0)
    emit(kind='torch_device', name=p.name, torch=torch.__version__, cuda=torch.version.cuda,
         cublas=getattr(torch.backends.cuda, 'preferred_blas_library', lambda: 'cublas')().name
         if hasattr(torch.backends.cuda, 'preferred_blas_library') else 'cublas')
    for step in (gemm, attention, copies):
        try:
            step()
        except Exception as e:  # report and go on: one failed step must not lose the others
            emit(kind='torch_error', step=step.__name__, error=repr(e))


if __name__ == '__main__':
    main()
