// fp32 CPU kernels of the reference engine. Pure C++: no Node-API, no allocation on the
// hot path beyond per-thread scratch.
//
// Determinism contract: every output element is a reduction whose order depends only on
// the reduction length (k, dim, head_dim, context length) — never on the row count, the
// batch composition or the thread count. Work is partitioned across threads only over
// independent outputs. So a row computed alone and the same row inside a batch of 7 are
// bit-identical. (The build uses ISO C++ mode, where GCC does not contract a*b+c into FMA;
// NOTE: do not compile these files with -ffast-math or -ffp-contract=fast.)
//
// Ownership: every pointer is borrowed for the duration of the call. Unless a function says
// otherwise, outputs must not alias inputs. Callers validate sizes; the kernels assert.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/kv_layout.h"

namespace mnemo::kernels::cpu {

// out[rows, dim] = table[ids[r], :]; table [vocab, dim]; every id in [0, vocab).
void Embedding(float* out, const float* table, const int32_t* ids, std::size_t rows, std::size_t dim,
               std::size_t vocab);

// out[rows, dim] = x / sqrt(mean(x²) + eps) * weight; weight [dim]. out may alias x.
void RmsNorm(float* out, const float* x, const float* weight, std::size_t rows, std::size_t dim, float eps);

// out[m, n] = x[m, k] · w[n, k]ᵀ (w in the Hugging Face [out_features, in_features] layout).
void Matmul(float* out, const float* x, const float* w, std::size_t m, std::size_t n, std::size_t k);

// In place on x[rows, num_heads * head_dim]: rotate_half (GPT-NeoX / Hugging Face Llama)
// rotary embedding; dimension i pairs with i + head_dim/2, inv_freq_i = theta^(-2i/head_dim).
void Rope(float* x, const int32_t* positions, std::size_t rows, std::size_t num_heads, std::size_t head_dim,
          float theta);

// out[n] = silu(gate[n]) * up[n]. out may alias gate or up.
void SiluMul(float* out, const float* gate, const float* up, std::size_t n);

// out[n] = a[n] + b[n]. out may alias a or b.
void Add(float* out, const float* a, const float* b, std::size_t n);

// out[rows, n] = x[rows, n] + bias[n]. out may alias x.
void AddBias(float* out, const float* x, const float* bias, std::size_t rows, std::size_t n);

// Writes k/v [rows, kv_heads * head_dim] of `layer` into the cache at slot
// slots[r] = block * block_size + offset. A negative slot skips the row (padding).
// cache [num_blocks, num_layers, 2, block_size, kv_heads, head_dim]
// num_blocks is the cache's capacity, used only to check slots.
void WriteKv(float* cache, std::size_t num_blocks, const float* k, const float* v, const int32_t* slots,
             std::size_t rows, int32_t layer, const KvGeometry& geom);

// Causal grouped-query attention of one layer over the paged cache.
// q/out [rows, num_heads * head_dim]; row i of sequence s is at position
// context_len[s] - (query_start[s+1] - query_start[s]) + i and attends to positions <= it.
// Keys are visited in position order with an exact two-pass softmax, so the result for a
// row depends only on its own q, its position and the cached keys/values.
// num_heads must be a multiple of kv_heads (head h reads kv head h / (num_heads / kv_heads)).
void PagedAttention(float* out, const float* q, const float* cache, std::size_t num_blocks, int32_t layer,
                    std::size_t num_heads, const KvGeometry& geom, const AttentionBatch& batch, float scale);

// Copies whole blocks (all layers, K and V) src[i] -> dst[i], in order i = 0..count-1.
void CopyBlocks(float* cache, std::size_t num_blocks, const int32_t* src, const int32_t* dst, std::size_t count,
                const KvGeometry& geom);

// out[r] = index of the largest x[r, :] (the lowest index on ties; NaN never wins).
void Argmax(int32_t* out, const float* x, std::size_t rows, std::size_t n);

// out[rows, n] = softmax(x * scale) per row (scale = 1/temperature). out may alias x.
void Softmax(float* out, const float* x, std::size_t rows, std::size_t n, float scale);

}  // namespace mnemo::kernels::cpu
