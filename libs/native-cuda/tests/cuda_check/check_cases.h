// The cases of the kernel check: every kernel-contract op over the shapes of every catalog
// model (shapes.txt), compared between a backend under test and a reference backend.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "host_ops.h"

namespace mnemo::check {

struct ModelShape {
  std::string name;
  int layers = 0, d_model = 0, heads = 0, kv_heads = 0, head_dim = 0, ffn = 0, vocab = 0, max_ctx = 0;
  float rope_theta = 10000.0f;
  bool qkv_bias = false;
};

// Parses shapes.txt: '#' comments, then one model a line:
// name layers d_model heads kv_heads head_dim ffn vocab max_ctx rope_theta qkv_bias(0|1)
std::vector<ModelShape> LoadShapes(const std::string& path, std::string* error);

// The worst case seen for one op.
struct OpReport {
  std::string op;
  int cases = 0;
  double worst = 0;      // error / allowed error, over every element of every case (<= 1 passes)
  double worst_abs = 0;  // the largest absolute difference
  std::string worst_case;
  double rtol = 0;       // 0: exact equality required
  bool failed_to_run = false;
  std::string error;
  bool ok() const { return !failed_to_run && worst <= 1.0; }
};

struct CheckOptions {
  double rtol = 1e-4;  // relative tolerance of float results (exact ops always compare equal)
  bool large = false;  // device-sized cases (more rows, longer contexts); off for the CPU half
  std::string only_op;  // when set, run only this op's cases
};

// Runs every op over every model; returns one report per op, in contract order.
std::vector<OpReport> RunChecks(HostOps& sut, HostOps& ref, const std::vector<ModelShape>& models,
                                const CheckOptions& opts);

// The kernel contract's op names, in order (kernel.contract.ts).
const std::vector<std::string>& ContractOps();

}  // namespace mnemo::check
