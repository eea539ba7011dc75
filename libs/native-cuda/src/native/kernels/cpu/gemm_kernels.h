// Micro-kernels of the packed GEMM, one set per instruction set (isa/gemm_*.cc).
//
// A micro-kernel computes one register tile C[rows, cols] (rows <= mr, cols <= nr) from a
// packed strip of A `[kc][mr]` and a packed panel of B `[kc][nr]`:
//   c[i][j] = (accumulate ? c[i][j] : 0) ∘ a[0][i]·b[0][j] ∘ a[1][i]·b[1][j] ∘ … ∘ a[kc-1][i]·b[kc-1][j]
// where ∘ is one fused multiply-add (FMA paths) or a multiply then an add (portable path),
// applied strictly in increasing k on one fp32 accumulator per element. The running value
// leaves the registers only as an exact fp32 store, so splitting k into blocks, choosing a
// tile shape, a row count or a thread never changes a bit: each element's value is a pure
// function of its row of A, its column of B and the path. Every `rows` variant is the same
// template instantiated with fewer rows, so edge tiles run the identical per-element chain.
//
// ISA files are compiled with their own target flags; they include only this header (no
// inline functions shared with baseline code, so the linker cannot pick an AVX copy of an
// inline function for a baseline caller).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/cpu_isa.h"

namespace mnemo::kernels::cpu {

constexpr std::size_t kMaxMr = 16;

using MicroKernelFn = void (*)(std::size_t kc, const float* a, const float* b, float* c, std::size_t ldc,
                               std::size_t cols, bool accumulate);
// Register-only multiply-add loop of the path (independent chains, no memory traffic):
// runs `iters` rounds, folds the result into *sink, returns the flops done.
using FmaBurstFn = double (*)(std::size_t iters, float* sink);

// Attention of `group` query heads of a tile of `rows` consecutive query rows of one sequence
// over one kv head of the paged cache; row r sees keys 0..n_keys+r-1 (causal). Per row and
// head, in this order: s_j = dot(q, k_j) * scale for j ascending, m = max s, p_j = exp(s_j - m),
// z = Σ p_j in 8 lanes (j mod 8) combined by a fixed tree, p_j /= z, out = Σ_j p_j v_j with j
// ascending. The tile only interleaves rows (each key and value row is read once for all rows
// of the tile, from L1, instead of once per row): a row's result depends only on its own q,
// its keys and the path, never on the tile it falls in.
struct AttendArgs {
  const float* key0;        // key row of token 0 of block 0 of this layer and kv head
  std::size_t block_stride;  // floats between consecutive cache blocks
  std::size_t value_offset;  // floats from a key row to its value row (one plane)
  std::size_t token_stride;  // floats between tokens inside a block
  std::size_t block_size;
  const int32_t* table;  // [ceil((n_keys + rows - 1) / block_size)] block ids
  std::size_t n_keys, group, head_dim;
  float scale;
  std::size_t rows = 1;    // query rows in the tile
  std::size_t q_stride = 0;  // floats between consecutive rows of q (and of out)
  const float* q;  // [rows][q_stride], the row's group heads [group][head_dim] at its start
  float* out;      // same layout as q
  float* scores;   // scratch [kv_heads][rows][group][n_keys + rows - 1]
  // Consecutive kv heads in one call: head i's keys at key0 + i * head_dim, its group's q and
  // out at + i * group * head_dim. Each head's results are those of a call for it alone; the
  // heads only share the walk over the cache (a decode row then reads whole token rows).
  std::size_t kv_heads = 1;
};
using AttendFn = void (*)(const AttendArgs& a);

struct GemmKernels {
  CpuIsa isa;
  std::size_t mr;  // rows of A per packed strip
  std::size_t nr;  // columns of B per packed panel
  bool fma;        // whether ∘ is fused
  FmaBurstFn fma_burst;
  AttendFn attend;  // null: use the portable one
  MicroKernelFn by_rows[kMaxMr + 1];  // by_rows[r] computes r rows (1 <= r <= mr)
};

// nullptr when this build has no such path (compiler or architecture).
const GemmKernels* GemmKernelsFor(CpuIsa isa);

const GemmKernels* PortableGemmKernels();
const GemmKernels* Avx2GemmKernels();
const GemmKernels* Avx512GemmKernels();
const GemmKernels* NeonGemmKernels();
void PortableAttend(const AttendArgs& a);
// Calls `one` for each kv head of `a` in turn, as a call of one head (kv_heads = 1).
void ForEachKvHead(const AttendArgs& a, AttendFn one);
AttendFn Avx2Attend();  // null without AVX2 + FMA in this build
AttendFn Avx512Attend();  // null without AVX-512F + FMA (and the AVX2 path) in this build

// out[i] = silu(gate[i]) * up[i] for i < n (out may alias gate or up).
using SiluMulFn = void (*)(float* out, const float* gate, const float* up, std::size_t n);
void PortableSiluMul(float* out, const float* gate, const float* up, std::size_t n);
SiluMulFn Avx2SiluMul();  // null without AVX2 + FMA in this build

}  // namespace mnemo::kernels::cpu
