// CpuOps: the addon's CPU kernels, called as the CPU backend calls them.
#include <vector>

#include "host_ops.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/gemm.h"

namespace mnemo::check {
namespace {

namespace cpu = kernels::cpu;

class CpuOps final : public HostOps {
 public:
  std::string Name() const override { return "cpu"; }

  void Embedding(float* out, const float* table, std::size_t vocab, const int32_t* ids, std::size_t rows,
                 std::size_t dim) override {
    cpu::Embedding(out, table, ids, rows, dim, vocab);
  }
  void RmsNorm(float* out, const float* x, const float* w, std::size_t rows, std::size_t dim, float eps) override {
    cpu::RmsNorm(out, x, w, rows, dim, eps);
  }
  void Matmul(float* out, const float* x, const float* w, std::size_t m, std::size_t n, std::size_t k) override {
    cpu::Matmul(out, x, w, m, n, k);
  }
  void PackedMatmul(float* out, const float* x, const float* w, std::size_t m, std::size_t n,
                    std::size_t k) override {
    std::vector<float> packed(cpu::PackedWeightElems(n, k));
    cpu::PackWeight(packed.data(), w, n, k);
    cpu::MatmulPacked(out, x, packed.data(), m, n, k);
  }
  void Rope(float* x, const int32_t* pos, std::size_t rows, std::size_t heads, std::size_t hd, float theta) override {
    cpu::Rope(x, pos, rows, heads, hd, theta);
  }
  void SiluMul(float* out, const float* gate, const float* up, std::size_t n) override { cpu::SiluMul(out, gate, up, n); }
  void Add(float* out, const float* a, const float* b, std::size_t n) override { cpu::Add(out, a, b, n); }
  void AddBias(float* out, const float* x, const float* bias, std::size_t rows, std::size_t n) override {
    cpu::AddBias(out, x, bias, rows, n);
  }
  void WriteKv(float* cache, std::size_t num_blocks, const float* k, const float* v, const int32_t* slots,
               std::size_t rows, int32_t layer, const KvGeometry& g) override {
    cpu::WriteKv(cache, num_blocks, k, v, slots, rows, layer, g);
  }
  void PagedAttention(float* out, const float* q, const float* cache, std::size_t num_blocks, int32_t layer,
                      std::size_t heads, const KvGeometry& g, const AttentionBatch& b, float scale) override {
    cpu::PagedAttention(out, q, cache, num_blocks, layer, heads, g, b, scale);
  }
  void CopyBlocks(float* cache, std::size_t num_blocks, const int32_t* src, const int32_t* dst, std::size_t count,
                  const KvGeometry& g) override {
    cpu::CopyBlocks(cache, num_blocks, src, dst, count, g);
  }
  void Argmax(int32_t* out, const float* x, std::size_t rows, std::size_t n) override { cpu::Argmax(out, x, rows, n); }
  void Softmax(float* out, const float* x, std::size_t rows, std::size_t n, float scale) override {
    cpu::Softmax(out, x, rows, n, scale);
  }
};

}  // namespace

std::unique_ptr<HostOps> MakeCpuOps() { return std::make_unique<CpuOps>(); }

}  // namespace mnemo::check
