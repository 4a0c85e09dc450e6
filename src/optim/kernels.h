#pragma once
// Helpers shared by the optimizer implementations (not part of the public API).
#include <cmath>
#include <string>

#include "ops/common.h"
#include "spiraltorch/optim/optimizer.h"

namespace st::optim::detail {

// A zero-filled (or `value`-filled) buffer shaped and typed like `param`; one kept in another
// dtype (a state saved while a half parameter was updated through a float32 copy) is converted.
inline Tensor& buffer(ParamState& s, const char* name, const Tensor& param, double value = 0.0) {
  auto it = s.buffers.find(name);
  if (it == s.buffers.end()) {
    it = s.buffers.emplace(name, full(param.shape(), value, param.dtype(), param.device())).first;
  } else if (it->second.dtype() != param.dtype()) {
    it->second = it->second.to(param.dtype());
  }
  return it->second;
}

// torch.lerp's formula: self + w * (end - self) for w < 0.5, else end - (end - self) * (1 - w).
template <class T>
inline T lerp(T self, T end, T w) {
  return w < T(0.5) ? self + w * (end - self) : end - (end - self) * (T(1) - w);
}

}  // namespace st::optim::detail
