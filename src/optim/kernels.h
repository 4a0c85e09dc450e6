#pragma once
// Helpers shared by the optimizer implementations (not part of the public API).
#include <cmath>
#include <string>

#include "ops/common.h"
#include "spiraltorch/optim/optimizer.h"

namespace st::optim::detail {

// A zero-filled (or `value`-filled) buffer shaped and typed like `param`.
inline Tensor& buffer(ParamState& s, const char* name, const Tensor& param, double value = 0.0) {
  auto it = s.buffers.find(name);
  if (it == s.buffers.end()) {
    it = s.buffers.emplace(name, full(param.shape(), value, param.dtype(), param.device())).first;
  }
  return it->second;
}

// The option checks SGD-style optimizers share: momentum >= 0, Nesterov needs momentum and no dampening.
inline void check_momentum_options(const Options& o, const std::string& who) {
  if (!(o.at("momentum") >= 0.0))
    throw ValueError(who + ": invalid momentum value " + std::to_string(o.at("momentum")));
  if (o.at("nesterov") != 0.0 && (o.at("momentum") <= 0.0 || o.at("dampening") != 0.0)) {
    throw ValueError(who + ": Nesterov momentum requires a momentum and zero dampening");
  }
}

// The option checks Adam-style optimizers share: eps >= 0 and betas in [0, 1).
inline void check_adam_options(const Options& o, const std::string& who) {
  if (!(o.at("eps") >= 0.0)) throw ValueError(who + ": invalid epsilon value " + std::to_string(o.at("eps")));
  for (const char* b : {"beta1", "beta2"}) {
    const double v = o.at(b);
    if (!(v >= 0.0 && v < 1.0)) throw ValueError(who + ": invalid " + b + " " + std::to_string(v));
  }
}

// torch.lerp's formula: self + w * (end - self) for w < 0.5, else end - (end - self) * (1 - w).
template <class T>
inline T lerp(T self, T end, T w) {
  return w < T(0.5) ? self + w * (end - self) : end - (end - self) * (T(1) - w);
}

}  // namespace st::optim::detail
