#include "spiraltorch/nn/sequential.h"

namespace st::nn {

void Sequential::add(std::shared_ptr<Module> layer) {
  register_module(std::to_string(children().size()), std::move(layer));
}

Tensor Sequential::forward(const Tensor& input) {
  Tensor x = input;
  for (const auto& [slot, child] : children()) x = (*child)(x);
  return x;
}

std::shared_ptr<Module> Sequential::at(int64_t index) const {
  const int64_t n = static_cast<int64_t>(children().size());
  if (index < -n || index >= n) {
    throw IndexError("Sequential: index " + std::to_string(index) + " is out of range for " + std::to_string(n) +
                     " layers");
  }
  return children()[index < 0 ? index + n : index].second;
}

}  // namespace st::nn
