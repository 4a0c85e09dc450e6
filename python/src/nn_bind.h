#pragma once
// Registration hooks of the nn binding files; each lives in its own .cpp.
#include "convert.h"
#include "spiraltorch/nn/module.h"

namespace stpy {

// A state dict from a Python dict or a sequence of (key, value) pairs.
st::nn::StateDict state_from_py(nb::handle obj, const char* op);

void bind_nn(nb::module_& parent);
// Layers, losses and optimizers (see nn_layers.cpp and friends).
void bind_nn_layers(nb::module_& nn);
// ModuleTrainer and the roundtable (train.cpp).
void bind_train(nb::module_& nn);

}  // namespace stpy
