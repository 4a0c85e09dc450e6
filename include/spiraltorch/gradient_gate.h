#pragma once
// One autograd node where the gradients of several tensors meet: the mechanism behind full
// backward hooks on modules called with several tensors (torch's BackwardHookFunction).
#include <functional>
#include <vector>

#include "spiraltorch/tensor.h"

namespace st {

// grads[i] is the gradient that reached alias i in this backward pass (undefined where none did,
// or where xs[i] needs no gradient); returns the gradients passed on to xs, one per input
// (undefined passes none).
using GateFn = std::function<std::vector<Tensor>(const std::vector<Tensor>& grads)>;

// Aliases of xs (same data) whose gradients are gathered: once every alias this backward pass
// reaches has its gradient, `on_grads` is called once with all of them. Returns xs unchanged when
// none needs a gradient or recording is off. Raises ValueError if on_grads returns a list of
// another length.
std::vector<Tensor> gradient_gate(const std::vector<Tensor>& xs, GateFn on_grads);

}  // namespace st
