#pragma once
#include <optional>

#include "spiraltorch/generator.h"
#include "spiraltorch/nn/activation.h"
#include "spiraltorch/nn/module.h"

namespace st::nn {

// In training mode zeroes each element with probability p and scales the kept ones
// by 1/(1-p); in eval mode the identity. Masks come from the global generator, or
// from the layer's own Philox stream when it was given a seed (reproducible masks).
class Dropout : public Module, public InplaceOption {
 public:
  explicit Dropout(double p = 0.5, std::string name = "", std::optional<uint64_t> seed = std::nullopt);
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "Dropout"; }
  double p() const { return p_; }
  // The layer's own generator, or null for the global one (what forward draws from).
  Generator* generator() { return generator_ ? &*generator_ : nullptr; }
  std::optional<uint64_t> seed() const {
    return generator_ ? std::optional<uint64_t>(generator_->seed()) : std::nullopt;
  }

 private:
  double p_;
  std::optional<Generator> generator_;
};

}  // namespace st::nn
