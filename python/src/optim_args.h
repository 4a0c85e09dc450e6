#pragma once
// Argument types the optimizer bindings show in signatures and stubs. Each is a plain
// nb::handle at run time (the bindings convert and check the value themselves); the
// nb::typed wrapper only names what is accepted, so help() and the .pyi say
// `params: Iterable[Tensor] | Iterable[dict]` instead of `object`.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

#include <utility>
#include <variant>

#include "convert.h"

namespace stpy {

// torch.optim's `params`: an iterable of tensors, or of parameter-group dicts.
using ParamsArg =
    nb::typed<nb::handle, std::variant<nb::typed<nb::iterable, Tensor>, nb::typed<nb::iterable, nb::dict>>>;
// A tensor or an iterable of tensors (clip_grad_*_'s parameters).
using TensorsArg = nb::typed<nb::handle, std::variant<Tensor, nb::typed<nb::iterable, Tensor>>>;
// A pair of floats given as any 2-sequence (betas, etas, step_sizes).
using FloatPairArg = nb::typed<nb::handle, std::pair<double, double>>;
// A state dict as returned by state_dict().
using StateDictArg = nb::typed<nb::handle, nb::dict>;
// PyTorch's foreach=/fused= switches (accepted; every update here is one native loop per parameter).
using FlagArg = nb::typed<nb::handle, bool>;  // None by default (nanobind adds "| None")
// LambdaLR's lr_lambda: epoch -> factor, one callable or one per parameter group.
using LambdaArg = nb::typed<nb::handle, std::variant<nb::typed<nb::callable, double(int64_t)>,
                                                     std::vector<nb::typed<nb::callable, double(int64_t)>>>>;
// One float, or one float per parameter group.
using FloatOrListArg = nb::typed<nb::handle, std::variant<double, std::vector<double>>>;

}  // namespace stpy
