#pragma once
// Registration hooks of the nn binding files; each lives in its own .cpp.
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/variant.h>

#include <functional>
#include <string>
#include <tuple>
#include <variant>

#include "convert.h"
#include "stub_types.h"
#include "spiraltorch/nn/module.h"
#include "spiraltorch/ops.h"

namespace stpy {

// Argument and result types the nn bindings show in signatures and stubs. Each is a plain
// nb::handle / nb::object at run time (the binding converts and checks the value itself); the
// nb::typed wrapper only names what is accepted, so help() and the .pyi show it instead of `object`.
// An int, or one int per spatial dim (kernel_size, stride, padding, dilation, output_size).
using IntOrInts = nb::typed<nb::handle, std::variant<int64_t, std::vector<int64_t>>>;
// A shape: one int or a sequence of ints (normalized_shape).
using ShapeArg = IntOrInts;
// Targets, labels and other operands given as a tensor or as data (a number, nested lists).
using ArrayArg = nb::typed<nb::handle, stub::ArrayLike>;
// A dtype: st.float32 and friends, or its name.
using DtypeArg = nb::typed<nb::handle, std::variant<Dtype, std::string>>;
// A state dict: a mapping, or (key, value) pairs, of tensors or data.
using StateArg = nb::typed<nb::handle, std::variant<nb::typed<nb::mapping, std::string, stub::ArrayLike>,
                                                    nb::typed<nb::iterable, std::tuple<std::string, stub::ArrayLike>>>>;
// A method that returns the object it was called on (train(), eval(), to(), ...).
using SelfRet = nb::typed<nb::object, stub::Self>;
// A sequence-layer input: a tensor or a PackedSequence.
using SeqInput = nb::typed<nb::handle, std::variant<Tensor, stub::PackedSequence>>;
// A device: 'cpu', 'cuda:0', ... or st.device.
using DeviceArg = nb::typed<nb::handle, stub::DeviceLike>;
// Results that are one tensor or a (tensor, indices) pair (the pools' return_indices).
using TensorOrPair = nb::typed<nb::object, std::variant<Tensor, std::tuple<Tensor, Tensor>>>;

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
