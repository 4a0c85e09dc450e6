#include "spiraltorch/nn/dropout.h"

#include "spiraltorch/nn/functional.h"

namespace st::nn {

Dropout::Dropout(double p, std::string name, std::optional<uint64_t> seed) : Module(std::move(name)), p_(p) {
  if (seed) generator_.emplace(*seed);
  if (!(p >= 0.0 && p <= 1.0)) {
    throw ValueError("Dropout: probability p must lie in [0, 1], got " + std::to_string(p));
  }
}

Tensor Dropout::forward(const Tensor& input) { return dropout(input, p_, is_training(), generator_ ? &*generator_ : nullptr); }

}  // namespace st::nn
