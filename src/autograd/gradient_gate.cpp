#include "spiraltorch/gradient_gate.h"

#include <utility>

#include "spiraltorch/autograd.h"
#include "spiraltorch/error.h"
#include "spiraltorch/ops.h"

namespace st {

std::vector<Tensor> gradient_gate(const std::vector<Tensor>& xs, GateFn on_grads) {
  const Tensor* first = nullptr;
  for (const Tensor& x : xs) {
    if (x.defined() && x.requires_grad()) {
      first = &x;
      break;
    }
  }
  if (!first || !grad_enabled()) return xs;
  const size_t n = xs.size();
  // The aliases hand their gradients to the gate through this state and pass it a zero: the
  // engine runs the gate's node after every alias node it reaches, so it sees them all at once.
  struct State {
    std::vector<Tensor> grads;
  };
  auto state = std::make_shared<State>(State{std::vector<Tensor>(n)});
  const Device device = first->device();
  Tensor token = zeros({}, Dtype::Float32, device);
  record(token, "BackwardGate", xs, [state, n, on_grads = std::move(on_grads)](const Tensor&) {
    const std::vector<Tensor> grads = std::exchange(state->grads, std::vector<Tensor>(n));
    std::vector<Tensor> out = on_grads(grads);
    if (out.size() != n) {
      throw ValueError("gradient_gate: the hook returned " + std::to_string(out.size()) + " gradients for " +
                       std::to_string(n) + " inputs");
    }
    return out;
  });
  std::vector<Tensor> aliases;
  aliases.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (!xs[i].defined() || !xs[i].requires_grad()) {
      aliases.push_back(xs[i]);
      continue;
    }
    Tensor alias = xs[i].detach();
    record(alias, "BackwardGateInput", {token}, [state, i, device](const Tensor& g) {
      state->grads[i] = g;
      return std::vector<Tensor>{zeros({}, Dtype::Float32, device)};
    });
    aliases.push_back(std::move(alias));
  }
  return aliases;
}

}  // namespace st
