#pragma once
// Registration hooks of the nn binding files; each lives in its own .cpp.
#include <string>

#include "convert.h"
#include "spiraltorch/nn/module.h"

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

// A state dict from a Python dict or a sequence of (key, value) pairs.
st::nn::StateDict state_from_py(nb::handle obj, const char* op);

void bind_nn(nb::module_& parent);
// Layers, losses and optimizers (see nn_layers.cpp and friends).
void bind_nn_layers(nb::module_& nn);
// ModuleTrainer and the roundtable (train.cpp).
void bind_train(nb::module_& nn);

}  // namespace stpy
