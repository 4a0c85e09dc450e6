#pragma once
// Registration hooks of the nn binding files; each lives in its own .cpp.
#include <functional>
#include <string>

#include "convert.h"
#include "spiraltorch/nn/module.h"
#include "spiraltorch/ops.h"

namespace stpy {

// PyTorch's second positional argument of the dropout layers, inplace, where this API took the
// layer's name before: a string there is the name (returned through `name`), else the flag.
inline bool inplace_or_name(nb::handle value, std::string& name) {
  if (nb::isinstance<nb::str>(value)) {
    name = nb::cast<std::string>(value);
    return false;
  }
  return !value.is_none() && nb::cast<bool>(value);
}

// f(x), or f(x) written into x (the functional forms' inplace=True; st::apply_inplace_).
inline Tensor maybe_inplace(const Tensor& x, bool inplace, const char* op,
                            const std::function<Tensor(const Tensor&)>& f) {
  if (!inplace) return f(x);
  Tensor target = x;
  return st::apply_inplace_(target, f, op);
}

// A state dict from a Python dict or a sequence of (key, value) pairs.
st::nn::StateDict state_from_py(nb::handle obj, const char* op);

void bind_nn(nb::module_& parent);
// Layers, losses and optimizers (see nn_layers.cpp and friends).
void bind_nn_layers(nb::module_& nn);
// ModuleTrainer and the roundtable (train.cpp).
void bind_train(nb::module_& nn);

}  // namespace stpy
