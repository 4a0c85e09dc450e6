#include "spiraltorch/nn/dropout.h"

#include "spiraltorch/nn/functional.h"

namespace st::nn {

Dropout::Dropout(double p, std::string name, std::optional<uint64_t> seed) : Module(std::move(name)), p_(p) {
  if (seed) generator_.emplace(*seed);
  if (!(p >= 0.0 && p <= 1.0)) {
    throw ValueError("Dropout: probability p must lie in [0, 1], got " + std::to_string(p));
  }
}

Tensor Dropout::forward(const Tensor& input) {
  if (!is_training()) return input;  // nothing to write in eval mode, in place or not
  return apply_fn(input, [&](const Tensor& x) { return dropout(x, p_, true, generator()); }, "Dropout");
}

}  // namespace st::nn
