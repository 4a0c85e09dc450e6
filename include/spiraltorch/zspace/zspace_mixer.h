#pragma once
// ZSpaceMixer: causal depthwise mixing along time. Each feature f of the output at step t
// is a learned weighted sum of the same feature over the last `kernel_size` steps:
//   y[b, t, f] = sum_{k<K} w[f, K-1-k] * x[b, t-k, f]          (x = 0 before t = 0)
// Input (batch, seq, features); a (batch, features) input is one step, so
// y = x * w[:, K-1] (with kernel_size 1 this is upstream's per-feature gate,
// ../shared/reference/upstream-nn.md §3.8). Causal, so right padding never reaches
// valid steps. Parameter "<name>::weight" (features, kernel_size), initialised to the
// identity mix (w[:, K-1] = 1, the rest 0).
#include "spiraltorch/nn/module.h"

namespace st::nn {

class ZSpaceMixer : public Module {
 public:
  ZSpaceMixer(int64_t features, int64_t kernel_size = 4, std::string name = "");
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "ZSpaceMixer"; }
  int64_t features() const { return features_; }
  int64_t kernel_size() const { return kernel_size_; }

 private:
  int64_t features_, kernel_size_;
};

}  // namespace st::nn
