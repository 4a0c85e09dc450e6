#pragma once
// Activation checkpointing (torch.utils.checkpoint): run a block without keeping its
// intermediate activations, and recompute them during backward.
#include <functional>
#include <vector>

#include "spiraltorch/tensor.h"

namespace st {

// Returns fn(inputs), recording one autograd node in place of fn's graph. Its backward
// re-runs fn on detached copies of the inputs with gradients on — under the autocast state
// and (preserve_rng_state) the generator position of the first run, so dropout draws the same
// mask — then back-propagates the incoming gradient through that fresh graph: parameters used
// inside fn accumulate their .grad there, and the inputs' gradients are returned.
// When no input requires a gradient the node would have no edge to hang on, so fn runs
// normally (correct gradients, no memory saved), as does a call with gradients off.
Tensor checkpoint(const std::function<Tensor(const std::vector<Tensor>&)>& fn, const std::vector<Tensor>& inputs,
                  bool preserve_rng_state = true);

}  // namespace st
