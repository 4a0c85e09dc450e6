#include "spiraltorch/zspace/zspace_mixer.h"

#include "spiraltorch/nn/conv.h"
#include "spiraltorch/ops.h"

namespace st::nn {

ZSpaceMixer::ZSpaceMixer(int64_t features, int64_t kernel_size, std::string name)
    : Module(std::move(name)), features_(features), kernel_size_(kernel_size) {
  if (features <= 0 || kernel_size <= 0) {
    throw ValueError("ZSpaceMixer: features and kernel_size must be positive, got " + std::to_string(features) +
                     " and " + std::to_string(kernel_size));
  }
  Tensor w = zeros({features, kernel_size});
  Tensor lag0 = narrow(w, 1, kernel_size - 1, 1);
  fill_(lag0, 1.0);
  register_parameter("weight", w);
}

Tensor ZSpaceMixer::forward(const Tensor& input) {
  const bool one_step = input.dim() == 2;
  if ((input.dim() != 2 && input.dim() != 3) || input.shape().back() != features_ ||
      (!one_step && input.shape()[1] == 0)) {
    throw ShapeError("ZSpaceMixer(" + std::to_string(features_) + "): input must be (batch, seq >= 1, " +
                     std::to_string(features_) + ") or (batch, " + std::to_string(features_) + "), got " +
                     shape_str(input.shape()));
  }
  const Tensor& w = *find_parameter("weight");
  if (one_step) return mul(input, select(w, 1, kernel_size_ - 1));
  const int64_t T = input.shape()[1], K = kernel_size_;
  // A depthwise conv1d padded by K-1 on both sides; its first T outputs are the causal ones.
  const Tensor y = conv1d(permute(input, {0, 2, 1}), reshape(w, {features_, 1, K}), Tensor(), 1, K - 1, 1, features_);
  return permute(narrow(y, 2, 0, T), {0, 2, 1});
}

}  // namespace st::nn
