#include "spiraltorch/nn/flatten.h"

#include "spiraltorch/nn/identity.h"
#include "spiraltorch/ops.h"

namespace st::nn {

Tensor Flatten::forward(const Tensor& input) {
  if (!input.defined()) throw ValueError("Flatten: input is undefined");
  const int64_t nd = std::max<int64_t>(input.dim(), 1);
  const int64_t s = start_ < 0 ? start_ + nd : start_, e = end_ < 0 ? end_ + nd : end_;
  if (s < 0 || s >= nd || e < 0 || e >= nd) {
    throw ShapeError("Flatten(start_dim=" + std::to_string(start_) + ", end_dim=" + std::to_string(end_) +
                     "): input of shape " + shape_str(input.shape()) + " has no such dims");
  }
  if (s > e) {
    throw ShapeError("Flatten(start_dim=" + std::to_string(start_) + ", end_dim=" + std::to_string(end_) +
                     "): start_dim comes after end_dim for input of shape " + shape_str(input.shape()));
  }
  return flatten(input, start_, end_);
}

}  // namespace st::nn
