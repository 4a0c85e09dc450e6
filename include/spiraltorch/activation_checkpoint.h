#pragma once
// Activation checkpointing (torch.utils.checkpoint): run a block without keeping its
// intermediate activations, and recompute them during backward.
#include <functional>
#include <vector>

#include "spiraltorch/tensor.h"

namespace st {

using CheckpointFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

// Returns fn(inputs), recording one autograd node with one output per result of fn in place of
// fn's graph. Its backward runs once per pass with the gradients of all outputs (an output that
// received none is left out of the recompute's backward): it re-runs fn on detached copies of the
// inputs with gradients on — under the autocast state and (preserve_rng_state) the generator
// position of the first run, so dropout draws the same mask — then back-propagates those gradients
// through that fresh graph: parameters used inside fn accumulate their .grad there, and the
// inputs' gradients are returned. Undefined and non-floating results are returned as fn made them
// and never carry a gradient.
// When no input requires a gradient the node would have no edge to hang on, so fn runs
// normally (correct gradients, no memory saved), as does a call with gradients off.
std::vector<Tensor> checkpoint(const CheckpointFn& fn, const std::vector<Tensor>& inputs,
                               bool preserve_rng_state = true);
// The same for a function with one result.
Tensor checkpoint(const std::function<Tensor(const std::vector<Tensor>&)>& fn, const std::vector<Tensor>& inputs,
                  bool preserve_rng_state = true);

}  // namespace st
