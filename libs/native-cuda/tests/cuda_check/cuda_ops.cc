// CudaOps: the addon's CUDA kernels behind HostOps. Each call uploads its inputs, runs the op
// on the compute stream and downloads what it wrote, as the CUDA backend's callers see it.
// The batch tables of pagedAttention and every index array stay host memory, as in the addon.
#include <string>
#include <vector>

#include "core/cuda/cuda_runtime.h"
#include "dev_tensor.h"
#include "host_ops.h"
#include "must.h"

namespace mnemo::check {

#ifdef MNEMO_WITH_CUDA
namespace {

namespace kc = kernels::cuda;

class CudaOps final : public HostOps {
 public:
  explicit CudaOps(kc::DType dt, std::string name) : dt_(dt), name_(std::move(name)) {}
  std::string Name() const override { return "cuda-" + name_; }

  std::vector<float> Stored(const std::vector<float>& v) override {
    Dev d(dt_, v.data(), v.size());
    std::vector<float> out(v.size());
    d.To(out.data(), out.size());
    return out;
  }

  void Embedding(float* out, const float* table, std::size_t vocab, const int32_t* ids, std::size_t rows,
                 std::size_t dim) override {
    Dev t(dt_, table, vocab * dim), o(dt_, rows * dim);
    Must(kc::Embedding(*o, *t, ids, rows, dim), "embedding");
    o.To(out, rows * dim);
  }
  void RmsNorm(float* out, const float* x, const float* w, std::size_t rows, std::size_t dim, float eps) override {
    Dev dx(dt_, x, rows * dim), dw(dt_, w, dim), o(dt_, rows * dim);
    Must(kc::RmsNorm(*o, *dx, *dw, rows, dim, eps), "rmsnorm");
    o.To(out, rows * dim);
  }
  void Matmul(float* out, const float* x, const float* w, std::size_t m, std::size_t n, std::size_t k) override {
    Dev dx(dt_, x, m * k), dw(dt_, w, n * k), o(dt_, m * n);
    Must(kc::Matmul(*o, *dx, *dw, m, n, k), "matmul");
    o.To(out, m * n);
  }
  // The CUDA backend's packWeight keeps w as uploaded and matmulPacked is matmul on it.
  void PackedMatmul(float* out, const float* x, const float* w, std::size_t m, std::size_t n,
                    std::size_t k) override {
    Matmul(out, x, w, m, n, k);
  }
  void Rope(float* x, const int32_t* pos, std::size_t rows, std::size_t heads, std::size_t hd, float theta) override {
    Dev dx(dt_, x, rows * heads * hd);
    Must(kc::Rope(*dx, pos, rows, heads, hd, theta), "rope");
    dx.To(x, rows * heads * hd);
  }
  void SiluMul(float* out, const float* gate, const float* up, std::size_t n) override {
    Dev g(dt_, gate, n), u(dt_, up, n), o(dt_, n);
    Must(kc::SiluMul(*o, *g, *u, n), "siluMul");
    o.To(out, n);
  }
  void Add(float* out, const float* a, const float* b, std::size_t n) override {
    Dev da(dt_, a, n), db(dt_, b, n), o(dt_, n);
    Must(kc::Add(*o, *da, *db, n), "add");
    o.To(out, n);
  }
  void AddBias(float* out, const float* x, const float* bias, std::size_t rows, std::size_t n) override {
    Dev dx(dt_, x, rows * n), db(dt_, bias, n), o(dt_, rows * n);
    Must(kc::AddBias(*o, *dx, *db, rows, n), "addBias");
    o.To(out, rows * n);
  }
  void WriteKv(float* cache, std::size_t num_blocks, const float* k, const float* v, const int32_t* slots,
               std::size_t rows, int32_t layer, const KvGeometry& g) override {
    const std::size_t ce = num_blocks * g.BlockElems(), te = rows * g.TokenElems();
    Dev c(dt_, cache, ce), dk(dt_, k, te), dv(dt_, v, te);
    Must(kc::WriteKv(*c, *dk, *dv, slots, rows, layer, g), "writeKv");
    c.To(cache, ce);
  }
  void PagedAttention(float* out, const float* q, const float* cache, std::size_t num_blocks, int32_t layer,
                      std::size_t heads, const KvGeometry& g, const AttentionBatch& b, float scale) override {
    const std::size_t rows = static_cast<std::size_t>(b.query_start[b.num_seqs]);
    const std::size_t qe = rows * heads * g.head_dim;
    Dev dq(dt_, q, qe), c(dt_, cache, num_blocks * g.BlockElems()), o(dt_, qe);
    Must(kc::PagedAttention(*o, *dq, *c, layer, heads, g, b, scale), "pagedAttention");
    o.To(out, qe);
  }
  void CopyBlocks(float* cache, std::size_t num_blocks, const int32_t* src, const int32_t* dst, std::size_t count,
                  const KvGeometry& g) override {
    const std::size_t ce = num_blocks * g.BlockElems();
    Dev c(dt_, cache, ce);
    Must(kc::CopyBlocks(*c, src, dst, count, g), "copyBlocks");
    c.To(cache, ce);
  }
  void Argmax(int32_t* out, const float* x, std::size_t rows, std::size_t n) override {
    Dev dx(dt_, x, rows * n);
    Must(kc::Argmax(out, *dx, rows, n), "argmax");
  }
  void Softmax(float* out, const float* x, std::size_t rows, std::size_t n, float scale) override {
    Dev dx(dt_, x, rows * n), o(dt_, rows * n);
    Must(kc::Softmax(*o, *dx, rows, n, scale), "softmax");
    o.To(out, rows * n);
  }

 private:
  kc::DType dt_;
  std::string name_;
};

}  // namespace
#endif

std::unique_ptr<HostOps> MakeCudaOps(const std::string& dtype, std::string* why) {
#ifdef MNEMO_WITH_CUDA
  const cuda::CudaInfo info = cuda::QueryCudaInfo();
  if (info.device_count == 0) {
    *why = "no CUDA device: " + info.error;
    return nullptr;
  }
  if (dtype != "bf16" && dtype != "f16") {
    *why = "dtype must be bf16 or f16";
    return nullptr;
  }
  return std::make_unique<CudaOps>(dtype == "f16" ? kernels::cuda::DType::kF16 : kernels::cuda::DType::kBF16, dtype);
#else
  (void)dtype;
  *why = "the harness was built without CUDA (nvcc not found)";
  return nullptr;
#endif
}

bool SetCudaAttentionPath(const std::string& name) {
#ifdef MNEMO_WITH_CUDA
  namespace kc = kernels::cuda;
  for (kc::AttentionPath p : {kc::AttentionPath::kAuto, kc::AttentionPath::kSimple, kc::AttentionPath::kSplit,
                              kc::AttentionPath::kFlash})
    if (name == kc::AttentionPathName(p)) {
      kc::SetAttentionPath(p);
      return true;
    }
#endif
  (void)name;
  return false;
}

}  // namespace mnemo::check
